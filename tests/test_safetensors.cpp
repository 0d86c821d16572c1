// The safetensors reader and writer of kvbench golden/check: a round trip through a file
// and through memory (the fuzzer's entry), and writes that fail without leaving files.
// The catalogue of bad files is tests/bad_golden.sh.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "golden/safetensors.hpp"

using namespace kvbench;
namespace fs = std::filesystem;

namespace {

SafetensorsFile sample() {
  SafetensorsFile f;
  f.tensors["b"] = {"F16", {2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}};
  f.tensors["a"] = {"U8", {3}, {9, 8, 7}};
  f.tensors["empty"] = {"F32", {0, 4}, {}};
  f.metadata["kvbench_manifest"] = "x.json";
  return f;
}

void check_same(const SafetensorsFile& got, const SafetensorsFile& want) {
  CHECK(got.metadata == want.metadata);
  REQUIRE(got.tensors.size() == want.tensors.size());
  for (const auto& entry : want.tensors) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one
    const StoredTensor& t = entry.second;
    CAPTURE(name);
    REQUIRE(got.tensors.count(name) == 1);
    CHECK(got.tensors.at(name).dtype == t.dtype);
    CHECK(got.tensors.at(name).shape == t.shape);
    CHECK(got.tensors.at(name).bytes == t.bytes);
  }
}

}  // namespace

TEST_CASE("safetensors: a file written reads back the same, from disk and from memory") {
  const fs::path dir = fs::temp_directory_path() / "kvbench_test_safetensors";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "x.safetensors").string();
  write_safetensors(path, sample());
  CHECK(!fs::exists(path + ".tmp"));
  check_same(read_safetensors(path), sample());
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  check_same(parse_safetensors(bytes, "memory"), sample());
  uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= uint64_t{bytes[i]} << (8 * i);
  CHECK(header_length % 8 == 0);  // padded: the data starts 8-byte aligned
  fs::remove_all(dir);
}

TEST_CASE("safetensors: a write that cannot happen is a FileError naming the file, and leaves nothing") {
  const fs::path dir = fs::temp_directory_path() / "kvbench_test_no_such_folder";
  fs::remove_all(dir);
  const std::string path = (dir / "x.safetensors").string();
  try {
    write_safetensors(path, sample());
    FAIL("no error");
  } catch (const FileError& e) {
    CHECK(std::string(e.what()).find("cannot write " + path) == 0);
  }
  CHECK(!fs::exists(dir));
}

TEST_CASE("safetensors: a bad file from memory is a FileError naming it and the tensor") {
  const std::string header = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string file(8, '\0');
  file[0] = static_cast<char>(header.size());
  file += header + std::string(4, '\0');  // half the data
  const std::vector<uint8_t> bytes(file.begin(), file.end());
  try {
    parse_safetensors(bytes, "mem.safetensors");
    FAIL("no error");
  } catch (const FileError& e) {
    CHECK(std::string(e.what()) ==
          "mem.safetensors: tensor 't': data_offsets [0, 8] lie outside the data section (4 bytes): "
          "truncated or corrupt file");
  }
}
