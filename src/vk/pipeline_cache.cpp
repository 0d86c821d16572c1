// The runtime's options from the environment and its on-disk VkPipelineCache
// (specs/runtime.md "Pipeline cache").
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include "vk/runtime_internal.hpp"

namespace kvbench {

// ---- options and the cache directory ----------------------------------------------

std::string env_value(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The whole number in environment variable `name`, from 1 to `most`; 0 when it is unset or
// empty. Anything else is an error that names the variable (a test's knob never falls back).
static uint64_t env_whole_number(const char* name, uint64_t most) {
  const std::string n = env_value(name);
  if (n.empty()) return 0;
  uint64_t v = 0;
  bool ok = n.size() <= 19 && n.find_first_not_of("0123456789") == std::string::npos;
  if (ok) v = std::stoull(n);
  if (!ok || v < 1 || v > most)
    throw std::runtime_error(std::string(name) + "=" + n + ": expected a whole number from 1 to " +
                             std::to_string(most));
  return v;
}

RuntimeOptions RuntimeOptions::from_env() {
  RuntimeOptions o;
  const std::string staging = env_value("KVBENCH_STAGING");
  if (staging == "1") o.staging = true;
  if (staging == "0") o.staging = false;
  o.pipeline_cache = env_value("KVBENCH_PIPELINE_CACHE") != "0";
  o.texels = env_value("KVBENCH_TEXELS") != "0";
  o.validation = env_value("KVBENCH_VALIDATION") == "1";
  o.max_workgroups = static_cast<uint32_t>(env_whole_number("KVBENCH_MAX_WORKGROUPS", 0xffffffffULL));
  o.max_scratch = env_whole_number("KVBENCH_MAX_SCRATCH", uint64_t{1} << 62);
  return o;
}

std::string default_cache_dir() {
  if (const std::string d = env_value("KVBENCH_CACHE_DIR"); !d.empty()) return d;
  if (const std::string d = env_value("XDG_CACHE_HOME"); !d.empty()) return d + "/kvbench";
  if (const std::string d = env_value("HOME"); !d.empty()) return d + "/.cache/kvbench";
  return "";
}

// ---- the pipeline cache file ---------------------------------------------------------
//
// The file is kvbench's 32-byte header (magic, format version, the size and FNV-1a hash of
// what follows), then the driver's vkGetPipelineCacheData bytes, whose own header
// (VkPipelineCacheHeaderVersionOne) must name this device. Truncation and corruption are
// caught by the size and hash before the driver sees the data; a file of another device or
// driver build is caught by the header (and the file name makes one unlikely).

namespace {

constexpr char kCacheMagic[8] = {'K', 'V', 'B', 'P', 'C', 'A', 'C', 'H'};
constexpr uint32_t kCacheFormat = 1;
constexpr size_t kCacheHeaderBytes = 32;
constexpr size_t kDriverHeaderBytes = 32;  // sizeof(VkPipelineCacheHeaderVersionOne)

uint64_t fnv1a(std::span<const uint8_t> bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

std::string hex(std::span<const uint8_t> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) s += {digits[b >> 4], digits[b & 15]};
  return s;
}

std::string hex32(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// The file's name: device and driver build, so that a driver update starts a new file.
std::string cache_file_name(const vk::PhysicalDeviceProperties& p) {
  return "pipelines-" + hex32(p.vendorID) + "-" + hex32(p.deviceID) + "-" + hex32(p.driverVersion) + "-" +
         hex(std::span(p.pipelineCacheUUID.data(), VK_UUID_SIZE)) + ".bin";
}

std::optional<std::vector<uint8_t>> read_file(const std::string& path, std::string& error) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  if (!std::filesystem::is_regular_file(path, ec)) {
    error = "not a regular file";
    return std::nullopt;
  }
  try {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes;
    if (in) bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) throw std::runtime_error("read error");
    return bytes;
  } catch (const std::exception& e) {
    error = std::string("cannot read it (") + e.what() + ")";
    return std::nullopt;
  }
}

uint32_t word(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The driver data of a cache file, or why it cannot be used.
std::optional<std::vector<uint8_t>> cache_payload(const std::vector<uint8_t>& file,
                                                  const vk::PhysicalDeviceProperties& p, std::string& why) {
  if (file.size() < kCacheHeaderBytes || std::memcmp(file.data(), kCacheMagic, 8) != 0) {
    why = "not a kvbench pipeline cache file";
    return std::nullopt;
  }
  uint64_t size, hash;
  std::memcpy(&size, file.data() + 16, 8);
  std::memcpy(&hash, file.data() + 24, 8);
  if (word(file.data() + 8) != kCacheFormat) {
    why = "format version " + std::to_string(word(file.data() + 8)) + ", not " + std::to_string(kCacheFormat);
    return std::nullopt;
  }
  const std::span payload(file.data() + kCacheHeaderBytes, file.size() - kCacheHeaderBytes);
  if (size != payload.size()) {
    why = "truncated or extended: " + std::to_string(payload.size()) +
          " bytes of data where the header says " + std::to_string(size);
    return std::nullopt;
  }
  if (fnv1a(payload) != hash) {
    why = "corrupt: the data's checksum does not match";
    return std::nullopt;
  }
  // VkPipelineCacheHeaderVersionOne: headerSize, headerVersion, vendorID, deviceID, pipelineCacheUUID.
  if (payload.size() < kDriverHeaderBytes || word(payload.data()) < kDriverHeaderBytes ||
      word(payload.data()) > payload.size() ||
      word(payload.data() + 4) != static_cast<uint32_t>(vk::PipelineCacheHeaderVersion::eOne)) {
    why = "the driver data has no valid VkPipelineCacheHeaderVersionOne";
    return std::nullopt;
  }
  if (word(payload.data() + 8) != p.vendorID || word(payload.data() + 12) != p.deviceID ||
      std::memcmp(payload.data() + 16, p.pipelineCacheUUID.data(), VK_UUID_SIZE) != 0) {
    why = "made by another device or driver (vendor " + hex32(word(payload.data() + 8)) + ", device " +
          hex32(word(payload.data() + 12)) + ", pipelineCacheUUID " + hex(payload.subspan(16, VK_UUID_SIZE)) +
          ")";
    return std::nullopt;
  }
  return std::vector<uint8_t>(payload.begin(), payload.end());
}

// A problem with the cache is reported once per process and never fails the run.
void report_cache_problem(const std::string& message) {
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) std::cerr << "kvbench: pipeline cache: " << message << "\n";
}

// Temp file + rename: a reader sees the old file or the new one, never a part.
void write_cache_file(const std::string& path, const std::vector<uint8_t>& data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::vector<uint8_t> file(kCacheHeaderBytes, 0);
  std::memcpy(file.data(), kCacheMagic, 8);
  std::memcpy(file.data() + 8, &kCacheFormat, 4);
  const uint64_t size = data.size(), hash = fnv1a(data);
  std::memcpy(file.data() + 16, &size, 8);
  std::memcpy(file.data() + 24, &hash, 8);
  file.insert(file.end(), data.begin(), data.end());
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw std::runtime_error("cannot write " + tmp);
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
}

}  // namespace

void Runtime::open_pipeline_cache(const RuntimeOptions& options) {
  const std::string dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  if (!options.pipeline_cache || dir.empty()) return;  // pipelines are built without a cache
  const auto props = physical_.getProperties();
  cache_status_.enabled = true;
  cache_status_.path = dir + "/" + cache_file_name(props);
  std::string why;
  std::vector<uint8_t> initial;
  if (auto file = read_file(cache_status_.path, why)) {
    if (auto payload = cache_payload(*file, props, why)) initial = std::move(*payload);
  }
  if (!initial.empty()) {
    try {
      pipeline_cache_ = vk::raii::PipelineCache(
          device_,
          vk::PipelineCacheCreateInfo{.initialDataSize = initial.size(), .pInitialData = initial.data()});
      cache_status_.loaded_bytes = initial.size();
      cache_on_disk_ = std::move(initial);
    } catch (const vk::SystemError& e) {
      why = std::string("the driver rejected it (") + e.what() + ")";
    }
  }
  if (!why.empty()) {
    cache_status_.ignored = why;
    report_cache_problem("ignoring " + cache_status_.path + ": " + why + "; it will be replaced");
  }
  if (!*pipeline_cache_) pipeline_cache_ = vk::raii::PipelineCache(device_, vk::PipelineCacheCreateInfo{});
}

void Runtime::save_pipeline_cache() noexcept {
  if (!*pipeline_cache_) return;
  try {
    const auto props = physical_.getProperties();
    // Another process may have written the file since it was read: merge its pipelines in.
    std::string why;
    if (auto file = read_file(cache_status_.path, why))
      if (auto theirs = cache_payload(*file, props, why); theirs && *theirs != cache_on_disk_) {
        vk::raii::PipelineCache other(device_, vk::PipelineCacheCreateInfo{.initialDataSize = theirs->size(),
                                                                           .pInitialData = theirs->data()});
        pipeline_cache_.merge(*other);
        cache_on_disk_ = std::move(*theirs);
      }
    const std::vector<uint8_t> data = pipeline_cache_.getData();
    if (data == cache_on_disk_ && cache_status_.ignored.empty()) return;  // unchanged
    write_cache_file(cache_status_.path, data);
  } catch (const std::exception& e) {
    report_cache_problem(std::string("not saved: ") + e.what());
  }
}

}  // namespace kvbench
