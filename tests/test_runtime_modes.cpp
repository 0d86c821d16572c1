// The runtime's memory modes, batches and on-disk pipeline cache. The staging mode (the
// discrete-GPU path: device-local buffers, copies through staging buffers) is forced on
// lavapipe here, so CI runs it.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cases/case_loader.hpp"
#include "cli_runner.hpp"
#include "ops/operator.hpp"
#include "runner/run_case.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;
namespace fs = std::filesystem;

namespace {

RuntimeOptions mode(bool staging) {
  RuntimeOptions o;
  o.staging = staging;
  o.pipeline_cache = false;
  return o;
}

std::vector<uint32_t> words(uint32_t n, uint32_t seed) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = i * 2654435761u + seed;
  return v;
}

std::span<const uint8_t> bytes_of(const std::vector<uint32_t>& v) {
  return std::span(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4);
}
std::span<uint8_t> bytes_of(std::vector<uint32_t>& v) {
  return std::span(reinterpret_cast<uint8_t*>(v.data()), v.size() * 4);
}

// copy_bandwidth copies `count` uvec4s from source to destination.
void copy(Batch& batch, Buffer& from, Buffer& to, uint32_t words) {
  batch.dispatch("copy_bandwidth", {{"source", &from}, {"destination", &to}}, {{"count", words / 4}},
                 (words / 4 + 255) / 256);
}

// A fresh directory under the system's temp directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("kvbench-test-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

RuntimeOptions cached(const fs::path& dir) {
  RuntimeOptions o;
  o.cache_dir = dir.string();
  return o;
}

void use_a_pipeline(Runtime& rt) {
  auto a = rt.buffer(64), b = rt.buffer(64);
  rt.dispatch("copy_bandwidth", {{"source", a.get()}, {"destination", b.get()}}, {{"count", 4}}, 1);
}

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_all(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE(
    "Runtime: the memory mode is chosen by device, and KVBENCH_STAGING's choice can be forced either way") {
  Runtime def(std::nullopt, mode(false));
  CHECK_FALSE(def.staging());
  Runtime staged(std::nullopt, mode(true));
  CHECK(staged.staging());
  if (Runtime(std::nullopt, RuntimeOptions{.pipeline_cache = false}).info().type == "cpu")
    CHECK_FALSE(
        Runtime(std::nullopt, RuntimeOptions{.pipeline_cache = false}).staging());  // lavapipe: zero-copy
}

TEST_CASE(
    "Batch: uploads, dependent dispatches and downloads in one submit, in call order, in both memory modes") {
  for (bool staging : {false, true}) {
    CAPTURE(staging);
    Runtime rt(std::nullopt, mode(staging));
    const uint32_t n = 4096;
    auto a = rt.buffer(n * 4), b = rt.buffer(n * 4), c = rt.buffer(n * 4);
    const auto x = words(n, 1), y = words(n, 2);
    std::vector<uint32_t> b_first(n), c_first(n), b_second(n), a_end(n);
    Batch batch(rt);
    batch.upload(*a, bytes_of(x));
    copy(batch, *a, *b, n);  // b = x
    copy(batch, *b, *c, n);  // c = x: reads what the previous dispatch wrote
    batch.download(*b, bytes_of(b_first));
    batch.download(*c, bytes_of(c_first));
    batch.upload(*a, bytes_of(y));  // after the downloads, before the next dispatch
    copy(batch, *a, *b, n);         // b = y
    batch.download(*b, bytes_of(b_second));
    batch.download(*a, bytes_of(a_end));
    const double ms = batch.submit();
    CHECK(b_first == x);
    CHECK(c_first == x);
    CHECK(b_second == y);
    CHECK(a_end == y);
    if (rt.info().timestamps) {
      CHECK(batch.dispatch_ms().size() == 3);
      CHECK(ms >= 0);
    }
    // The batch is empty again and can be reused.
    copy(batch, *c, *a, n);
    batch.download(*a, bytes_of(a_end));
    batch.submit();
    CHECK(a_end == x);
    // Synchronous buffer copies work in both modes.
    a->upload(bytes_of(y));
    std::vector<uint32_t> back(n);
    a->download(bytes_of(back));
    CHECK(back == y);
    CHECK(rt.take_validation_messages().count() == 0);
  }
}

TEST_CASE("Batch: many dispatches of one shader each keep their own parameters and descriptor set") {
  Runtime rt(std::nullopt, mode(true));
  const uint32_t n = 64;
  auto src = rt.buffer(n * 4), dst = rt.buffer(n * 4);
  const auto x = words(n, 7);
  std::vector<uint32_t> zeros(n, 0), got(n);
  Batch batch(rt);
  batch.upload(*src, bytes_of(x));
  batch.upload(*dst, bytes_of(zeros));
  // 40 dispatches (more than one descriptor pool, one query pool): dispatch k copies the
  // first 4 (k + 1) words. Were a later dispatch's parameters to overwrite an earlier
  // one's, the copy would still be whole; the count of each is what is checked, through
  // the last one, which copies 4 * 16 = all 64 words after 24 copying fewer.
  for (uint32_t k = 0; k < 40; ++k)
    batch.dispatch("copy_bandwidth", {{"source", src.get()}, {"destination", dst.get()}},
                   {{"count", std::min<uint32_t>(k + 1, 16)}}, 1);
  batch.download(*dst, bytes_of(got));
  batch.submit();
  CHECK(got == x);
  if (rt.info().timestamps) CHECK(batch.dispatch_ms().size() == 40);
}

TEST_CASE("Staging forced: real operator cases (KV cache store+fetch, MHCA, FIA, reshape, quantize) pass") {
  Runtime rt(std::nullopt, mode(true));
  REQUIRE(rt.staging());
  const std::string dir = std::string(KVBENCH_SOURCE_DIR) + "/cases/";
  const LoadedCases loaded = load_case_paths(
      {dir + "pmx.KeyValueCache/quantized.json",
       dir + "pmx.dynamic_batching.MultiHeadCacheAttention/gqa.json",
       dir + "aclnn.FusedInferAttentionScoreV3/decode.json",
       dir + "aclnn.FusedInferAttentionScoreV3/paged_decode.json",
       dir + "atb.ReshapeAndCacheOmni/mixed_heads.json", dir + "kvbench.QuantizeGroup/asymmetric.json"},
      {});
  REQUIRE(loaded.errors.empty());
  std::map<std::string, int> passed;
  for (const auto& def : loaded.cases) {
    if (passed[def.op] >= 3) continue;  // a few of each keep the test short
    auto op = instantiate_case(*find_operator(def.op), def, {});
    const CaseResult r = run_case(def, *op, rt);
    CAPTURE(def.name);
    CAPTURE(r.reason);
    CHECK(r.status == Status::pass);
    ++passed[def.op];
  }
  CHECK(passed.size() == 5);
}

TEST_CASE(
    "lavapipe compiles a pipeline once for tensors of every size class: Mesa's cache holds no second copy") {
  // One FIA pipeline over K/V of 384 bytes, then of 65536 (a power of two, bits 8-15 zero):
  // llvmpipe keys its code on both properties of a texel view's buffer (src/vk/buffer.cpp).
  // Each case runs in a process of its own with a Mesa shader cache of this test's.
  if (run_kvbench("devices").output.find("* 0: llvmpipe") == std::string::npos) {
    MESSAGE("skipped: the default device is not lavapipe");
    return;
  }
  TempDir dir("mesa-cache");
  auto run_one = [&](const std::string& kv_length) {
    // KVBENCH_DIRECT=0: both through the merge, which a one-split plan of the tiles kernel
    // would leave out, so that the two compile the same pipelines whichever kernel runs.
    return run_command("MESA_SHADER_CACHE_DIR=" + dir.path.string() + " KVBENCH_DIRECT=0 " + KVBENCH_BINARY +
                       " run " + source_path("tests/data/size_classes/fia_kv_lengths.json") +
                       " --filter 'S2=" + kv_length + "]'");
  };
  auto cache_bytes = [&] {
    uintmax_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir.path))
      if (e.is_regular_file()) n += e.file_size();
    return n;
  };
  const CommandResult small = run_one("3");
  INFO(small.output);
  REQUIRE(small.status == 0);
  const uintmax_t after_small = cache_bytes();
  REQUIRE(after_small > 0);  // the cache is on
  const CommandResult large = run_one("512");
  INFO(large.output);
  REQUIRE(large.status == 0);
  CHECK(cache_bytes() == after_small);
}

TEST_CASE("Pipeline cache: written at exit, loaded by the next runtime, not rewritten when unchanged") {
  TempDir dir("pcache");
  std::string path;
  {
    Runtime rt(std::nullopt, cached(dir.path));
    REQUIRE(rt.pipeline_cache_status().enabled);
    path = rt.pipeline_cache_status().path;
    CHECK(path.rfind(dir.path.string() + "/pipelines-", 0) == 0);
    CHECK(rt.pipeline_cache_status().loaded_bytes == 0);
    use_a_pipeline(rt);
  }
  REQUIRE(fs::exists(path));
  const auto written = read_all(path);
  CHECK(written.size() >= 64);  // kvbench's header and at least the driver's
  const auto stamp = fs::last_write_time(path);
  {
    Runtime rt(std::nullopt, cached(dir.path));
    CHECK(rt.pipeline_cache_status().ignored == "");
    CHECK(rt.pipeline_cache_status().loaded_bytes == written.size() - 32);
    use_a_pipeline(rt);
  }
  CHECK(read_all(path) == written);  // lavapipe's data does not change once a pipeline is in it
  CHECK(fs::last_write_time(path) == stamp);
  fs::remove_all(dir.path);
  {
    RuntimeOptions off = cached(dir.path);
    off.pipeline_cache = false;
    Runtime rt(std::nullopt, off);
    CHECK_FALSE(rt.pipeline_cache_status().enabled);
    use_a_pipeline(rt);
  }
  CHECK_FALSE(fs::exists(dir.path));
}

TEST_CASE(
    "Pipeline cache: a corrupt, truncated, foreign or unreadable file is ignored with the reason and "
    "replaced") {
  TempDir dir("pcache-bad");
  std::string path;
  {
    Runtime rt(std::nullopt, cached(dir.path));
    path = rt.pipeline_cache_status().path;
    use_a_pipeline(rt);
  }
  const auto good = read_all(path);
  REQUIRE(good.size() >= 64);
  auto fnv1a = [](const std::vector<uint8_t>& b, size_t from) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = from; i < b.size(); ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
  };
  auto foreign = good;
  foreign[32 + 16] ^= 0xff;  // the driver header's pipelineCacheUUID, checksum updated
  const uint64_t h = fnv1a(foreign, 32);
  std::memcpy(foreign.data() + 24, &h, 8);
  auto corrupt = good;
  corrupt.back() ^= 1;
  const std::vector<std::pair<std::vector<uint8_t>, std::string>> bad{
      {{}, "not a kvbench pipeline cache file"},
      {std::vector<uint8_t>(good.begin(), good.end() - 1), "truncated"},
      {corrupt, "checksum"},
      {foreign, "another device or driver"},
  };
  for (const auto& entry : bad) {
    // Named copies, not a structured binding: clang 14 cannot capture a binding in
    // CAPTURE's lambda (C++20 allows it; the CI's ASan build is clang).
    const std::vector<uint8_t>& bytes = entry.first;
    const std::string& why = entry.second;
    CAPTURE(why);
    write_all(path, bytes);
    {
      Runtime rt(std::nullopt, cached(dir.path));
      CHECK(rt.pipeline_cache_status().ignored.find(why) != std::string::npos);
      CHECK(rt.pipeline_cache_status().loaded_bytes == 0);
      use_a_pipeline(rt);
    }
    Runtime again(std::nullopt, cached(dir.path));  // the file was replaced by a good one
    CHECK(again.pipeline_cache_status().ignored == "");
    CHECK(again.pipeline_cache_status().loaded_bytes > 0);
  }
  // A path that cannot be read (a directory where the file should be): ignored, not fatal.
  fs::remove(path);
  fs::create_directory(path);
  Runtime rt(std::nullopt, cached(dir.path));
  CHECK(rt.pipeline_cache_status().ignored == "not a regular file");
  CHECK(rt.pipeline_cache_status().loaded_bytes == 0);
  use_a_pipeline(rt);
}

TEST_CASE("default_cache_dir: KVBENCH_CACHE_DIR, else XDG_CACHE_HOME/kvbench, else HOME/.cache/kvbench") {
  struct Env {
    std::string name;
    std::optional<std::string> old;
    Env(const char* n, const char* v) : name(n) {
      if (const char* o = std::getenv(n)) old = o;
      if (v)
        ::setenv(n, v, 1);
      else
        ::unsetenv(n);
    }
    ~Env() {
      if (old)
        ::setenv(name.c_str(), old->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  };
  {
    Env a("KVBENCH_CACHE_DIR", "/x/kv"), b("XDG_CACHE_HOME", "/x/xdg"), c("HOME", "/x/home");
    CHECK(default_cache_dir() == "/x/kv");
  }
  {
    Env a("KVBENCH_CACHE_DIR", nullptr), b("XDG_CACHE_HOME", "/x/xdg"), c("HOME", "/x/home");
    CHECK(default_cache_dir() == "/x/xdg/kvbench");
  }
  {
    Env a("KVBENCH_CACHE_DIR", nullptr), b("XDG_CACHE_HOME", nullptr), c("HOME", "/x/home");
    CHECK(default_cache_dir() == "/x/home/.cache/kvbench");
  }
}
