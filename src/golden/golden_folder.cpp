#include "golden/golden_folder.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/file_io.hpp"

namespace kvbench {
namespace fs = std::filesystem;

GoldenFolder scan_golden(const std::string& golden) {
  GoldenFolder out;
  auto add = [&out](const fs::path& p, bool named) {
    try {
      const nlohmann::json doc = read_manifest_json(p.string());
      if (!looks_like_manifest(doc)) {
        std::error_code ec;
        const bool has_data = fs::exists(fs::path(p).replace_extension(".safetensors"), ec);
        if (!named && !has_data) return;
        throw ManifestError("", "not a kvbench golden manifest (no case_hash or outputs)");
      }
      out.found.push_back(parse_manifest(doc, p.string()));
    } catch (const ManifestError& e) {
      out.invalid.push_back({p.string(), e.pointer(), e.what(), ""});
    }
  };
  std::error_code ec;
  if (!fs::is_directory(golden, ec)) {
    fs::path p(golden);
    if (p.extension() == ".safetensors") p.replace_extension(".json");
    add(p, true);
    return out;
  }
  std::vector<fs::path> manifests, data;
  fs::recursive_directory_iterator it(golden, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const bool json = p.extension() == ".json";
    if (!json && p.extension() != ".safetensors") continue;
    // Named like a golden file but not a regular one: an error, never skipped in silence.
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      const int err = errno;
      out.invalid.push_back({p.string(), "", std::string("cannot read the file: ") + std::strerror(err), ""});
    } else if (S_ISREG(st.st_mode)) {
      (json ? manifests : data).push_back(p);
    } else if (!S_ISDIR(st.st_mode)) {
      out.invalid.push_back(
          {p.string(), "", std::string("not a regular file (") + file_kind(st.st_mode) + ")", ""});
    }
  }
  if (ec)
    out.invalid.push_back({golden, "", "cannot list the golden folder completely: " + ec.message(), ""});
  std::sort(manifests.begin(), manifests.end());
  for (const auto& f : manifests) add(f, false);
  std::set<std::string> named;
  for (const auto& m : out.found) named.insert(fs::path(m.safetensors).lexically_normal().string());
  std::sort(data.begin(), data.end());
  for (const auto& d : data) {  // (a manifest beside it that is invalid is reported already)
    const bool sibling =
        std::binary_search(manifests.begin(), manifests.end(), fs::path(d).replace_extension(".json"));
    if (!named.count(d.lexically_normal().string()) && !sibling) out.orphan_data.push_back(d.string());
  }
  return out;
}

}  // namespace kvbench
