// kvbench-ggml: llama.cpp's released ggml libraries as a backend of `kvbench run --backend`
// (examples/ggml/README.md, specs/golden-format.md "Another backend in the loop").
//
//   kvbench-ggml --device cpu|vulkan|NAME GOLDEN_DIR ACTUAL_DIR
//   kvbench-ggml --device cpu|vulkan|NAME --repeat N [--warmup W] [--vk-timestamps] GOLDEN_DIR
//   kvbench-ggml --self-test --device cpu|vulkan|NAME  (self_test.cpp)
//
// For each case in GOLDEN_DIR it builds the ggml graph of the case's operator
// (ggml.FLASH_ATTN_EXT, ggml.GET_ROWS, ggml.SET_ROWS), computes it on the device and writes
// ACTUAL_DIR/<stem>.safetensors with every output of the golden. Exit 0: all written; 77: a
// case it does not implement (unknown operator or type, or the device's supports_op says
// no; one line says why, and the other cases are still written); 1: an error. With --repeat
// it writes nothing: it computes each case's graph W + N times and prints one JSON line of
// timings per case on stdout (time_case).
#include <ggml-alloc.h>
#include <ggml-backend.h>
#include <ggml.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "golden/safetensors.hpp"  // in-tree: kvbench's own safetensors writer
#include "kvbench/golden.hpp"
#include "kvbench_ggml.hpp"

#ifndef KVBENCH_GGML_LIB_DIR
#error "KVBENCH_GGML_LIB_DIR (the folder of libggml-*.so) must be defined"
#endif

namespace kvbench_ggml {
namespace {

// ---- libraries and device ----------------------------------------------------------------

int g_log_level = GGML_LOG_LEVEL_WARN;  // KVBENCH_GGML_VERBOSE=1: every log line
ggml_log_level g_last_level = GGML_LOG_LEVEL_NONE;
void log_to_stderr(ggml_log_level level, const char* text, void*) {
  if (level != GGML_LOG_LEVEL_CONT) g_last_level = level;
  if (g_last_level >= g_log_level || g_last_level == GGML_LOG_LEVEL_NONE) std::fputs(text, stderr);
}

// ggml-vulkan hides CPU Vulkan devices (lavapipe) unless GGML_VK_VISIBLE_DEVICES names
// them. Where the user has not set it and no other device is there, name the first CPU one
// (the index is the loader's enumeration order, which ggml-vulkan uses too).
void show_cpu_vulkan_device_if_alone() {
  if (std::getenv("GGML_VK_VISIBLE_DEVICES")) return;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  if (vkCreateInstance(&info, nullptr, &instance) != VK_SUCCESS) return;
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(instance, &n, devices.data());
  std::optional<uint32_t> first_cpu;
  bool other = false;
  for (uint32_t i = 0; i < n; ++i) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(devices[i], &p);
    if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
      if (!first_cpu) first_cpu = i;
    } else {
      other = true;
    }
  }
  vkDestroyInstance(instance, nullptr);
  if (!other && first_cpu) setenv("GGML_VK_VISIBLE_DEVICES", std::to_string(*first_cpu).c_str(), 1);
}

std::string device_list() {
  std::string s;
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    ggml_backend_dev_t d = ggml_backend_dev_get(i);
    s += std::string(s.empty() ? "" : ", ") + ggml_backend_dev_name(d) + " (" +
         ggml_backend_dev_description(d) + ")";
  }
  return s.empty() ? "none" : s;
}

Device open_device(const std::string& want) {
  const bool vulkan = want.rfind("vulkan", 0) == 0 || want.rfind("Vulkan", 0) == 0;
  if (vulkan) show_cpu_vulkan_device_if_alone();
  ggml_backend_load_all_from_path(KVBENCH_GGML_LIB_DIR);
  Device d;
  if (want == "cpu") {
    d.dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  } else if (want == "vulkan") {
    for (size_t i = 0; i < ggml_backend_dev_count() && !d.dev; ++i) {
      ggml_backend_dev_t c = ggml_backend_dev_get(i);
      if (std::strcmp(ggml_backend_reg_name(ggml_backend_dev_backend_reg(c)), "Vulkan") == 0) d.dev = c;
    }
  } else {
    d.dev = ggml_backend_dev_by_name(want.c_str());  // e.g. Vulkan1, CPU
  }
  if (!d.dev)
    throw std::runtime_error("no ggml device '" + want +
                             "' in " KVBENCH_GGML_LIB_DIR " (devices: " + device_list() + ")");
  d.backend = ggml_backend_dev_init(d.dev, nullptr);
  if (!d.backend)
    throw std::runtime_error(std::string("could not start ggml device ") + ggml_backend_dev_name(d.dev));
  ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(d.dev);
  if (auto set_threads = reinterpret_cast<ggml_backend_set_n_threads_t>(
          ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads")))
    set_threads(d.backend, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  d.label = std::string(ggml_backend_dev_name(d.dev)) + " (" + ggml_backend_dev_description(d.dev) + ")";
  return d;
}

// The ggml libraries this process mapped (which CPU variant ggml_backend_load_best chose).
std::string loaded_libraries() {
  std::string libs;
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return libs;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, f)) {
    const char* slash = std::strrchr(buf, '/');
    if (!slash || std::strncmp(slash + 1, "libggml", 7) != 0) continue;
    std::string name(slash + 1);
    name.erase(name.find_last_not_of("\n") + 1);
    if (libs.find(name) == std::string::npos) libs += (libs.empty() ? "" : " ") + name;
  }
  std::fclose(f);
  return libs;
}

// ---- graphs --------------------------------------------------------------------------------

ggml_type type_of(const std::string& name) {
  static const std::pair<const char*, ggml_type> types[] = {
      {"f32", GGML_TYPE_F32},   {"f16", GGML_TYPE_F16},   {"bf16", GGML_TYPE_BF16},
      {"q8_0", GGML_TYPE_Q8_0}, {"q4_0", GGML_TYPE_Q4_0}, {"q4_1", GGML_TYPE_Q4_1},
      {"q5_0", GGML_TYPE_Q5_0}, {"q5_1", GGML_TYPE_Q5_1}, {"iq4_nl", GGML_TYPE_IQ4_NL}};
  for (const auto& [n, t] : types)
    if (name == n) return t;
  throw Skip("type '" + name + "' is not one kvbench-ggml maps to ggml");
}

// kvbench's dtype of a ggml tensor's data: the float types by name, block types as u8 rows.
std::string dtype_of(ggml_type t) {
  switch (t) {
    case GGML_TYPE_F32: return "f32";
    case GGML_TYPE_F16: return "f16";
    case GGML_TYPE_BF16: return "bf16";
    case GGML_TYPE_I32: return "i32";
    case GGML_TYPE_I64: return "i64";
    default: return "u8";
  }
}

// `a` must hold `t`'s data exactly: its dtype, and its shape (kvbench's order, ggml's ne
// reversed; block types' rows in bytes) up to leading 1s.
void expect_layout(const kvbench::Array& a, const ggml_tensor* t) {
  const std::string want = dtype_of(t->type);
  const auto have = kvbench::parse_dtype(a.dtype()), need = kvbench::parse_dtype(want);
  std::vector<int64_t> ne(t->ne, t->ne + 4);
  if (ggml_is_quantized(t->type)) ne[0] = static_cast<int64_t>(ggml_row_size(t->type, t->ne[0]));
  std::vector<int64_t> shape(a.shape().rbegin(), a.shape().rend());
  bool ok = shape.size() <= 4 && have == need;
  for (size_t i = 0; ok && i < 4; ++i) ok = (i < shape.size() ? shape[i] : 1) == ne[i];
  if (!ok || a.bytes().size() != ggml_nbytes(t)) {
    std::string s;
    for (int i = 3; i >= 0; --i) s += std::to_string(ne[i]) + (i ? "," : "");
    throw std::runtime_error("tensor '" + a.name() + "' is " + a.dtype() + " " +
                             kvbench::shape_string(a.shape()) + ", ggml's " + ggml_type_name(t->type) +
                             " tensor needs " + want + " [" + s + "]");
  }
}

void feed(Graph& g, ggml_tensor* t, const kvbench::Array& a) {
  expect_layout(a, t);
  g.inputs.emplace_back(t, a.bytes());
}

void flash_attn_ext(Graph& g, const kvbench::Golden& c) {
  const ggml_type tk = type_of(c.text("type_k")), tv = type_of(c.text("type_v"));
  const int64_t B = c.size("batch"), nb = c.size("n_batch"), H = c.size("n_head"), Hkv = c.size("n_head_kv"),
                nkv = c.size("n_kv"), Dk = c.size("head_size_k"), Dv = c.size("head_size_v");
  ggml_tensor* q = g.tensor(GGML_TYPE_F32, {Dk, nb, H, B}, "q");
  ggml_tensor* k = g.tensor(tk, {Dk, nkv, Hkv, B}, "k");
  ggml_tensor* v = g.tensor(tv, {Dv, nkv, Hkv, B}, "v");
  feed(g, q, c.input("q"));
  feed(g, k, c.input("k"));
  feed(g, v, c.input("v"));
  ggml_tensor* mask = nullptr;
  if (c.text("mask") != "none") {
    mask = g.tensor(GGML_TYPE_F16, {nkv, nb, c.size("mask_heads"), c.size("mask_batch")}, "mask");
    feed(g, mask, c.input("mask"));
  }
  g.node = ggml_flash_attn_ext(g.ctx.get(), q, k, v, mask, static_cast<float>(c.number("scale")),
                               static_cast<float>(c.number("max_bias")),
                               static_cast<float>(c.number("logit_softcap")));
  if (c.number("sinks") != 0) {
    ggml_tensor* sinks = g.tensor(GGML_TYPE_F32, {H, 1, 1, 1}, "sinks");
    feed(g, sinks, c.input("sinks"));
    ggml_flash_attn_ext_add_sinks(g.node, sinks);
  }
  const std::string prec = c.text("precision");
  if (prec == "f32") {
    ggml_prec_set_acc(g.node, GGML_PREC_F32);
  } else if (prec != "default") {
    throw Skip("precision '" + prec + "' is not one kvbench-ggml maps to ggml");
  }
  g.result = g.node;
  g.what = std::string("FLASH_ATTN_EXT k ") + ggml_type_name(tk) + " v " + ggml_type_name(tv) + " Dk " +
           std::to_string(Dk) + " Dv " + std::to_string(Dv) + (mask ? " mask" : "") +
           (g.node->src[4] ? " sinks" : "") + " prec " + prec;
}

void get_rows(Graph& g, const kvbench::Golden& c) {
  const ggml_type t = type_of(c.text("type"));
  const int64_t B = c.size("batch"), mats = c.size("mats");
  ggml_tensor* src = g.tensor(t, {c.size("cols"), c.size("rows"), mats, B}, "src");
  ggml_tensor* idx = g.tensor(GGML_TYPE_I32, {c.size("n_idx"), mats, B, 1}, "indices");
  feed(g, src, c.input("src"));
  feed(g, idx, c.input("indices"));
  g.node = g.result = ggml_get_rows(g.ctx.get(), src, idx);
  g.what = std::string("GET_ROWS ") + ggml_type_name(t);
}

void set_rows(Graph& g, const kvbench::Golden& c, const kvbench::Array& dst_before) {
  const ggml_type t = type_of(c.text("type"));
  const std::string it = c.text("index_type");
  if (it != "i64" && it != "i32") throw Skip("index_type '" + it + "' is not i64 or i32");
  const int64_t B = c.size("batch"), mats = c.size("mats"), cols = c.size("cols"), n_idx = c.size("n_idx");
  ggml_tensor* dst = g.tensor(t, {cols, c.size("rows"), mats, B}, "dst");
  ggml_tensor* src = g.tensor(GGML_TYPE_F32, {cols, n_idx, mats, B}, "src");
  ggml_tensor* idx = g.tensor(it == "i64" ? GGML_TYPE_I64 : GGML_TYPE_I32,
                              {n_idx, c.size("idx_mats"), c.size("idx_batch"), 1}, "indices");
  feed(g, dst, dst_before);
  feed(g, src, c.input("src"));
  feed(g, idx, c.input("indices"));
  g.node = ggml_set_rows(g.ctx.get(), dst, src, idx);
  g.result = dst;
  g.what = std::string("SET_ROWS ") + ggml_type_name(t) + " index " + it;
}

}  // namespace

ggml_cgraph* prepare(const Device& d, Graph& g, Buffer& buf) {
  if (!ggml_backend_dev_supports_op(d.dev, g.node))
    throw Skip(d.label + " does not support " + g.what + " (ggml_backend_dev_supports_op)");
  buf.b = ggml_backend_alloc_ctx_tensors(g.ctx.get(), d.backend);
  if (!buf.b) throw std::runtime_error("could not allocate the tensors of " + g.what + " on " + d.label);
  for (const auto& [t, bytes] : g.inputs) ggml_backend_tensor_set(t, bytes.data(), 0, bytes.size());
  ggml_cgraph* gf = ggml_new_graph(g.ctx.get());
  ggml_build_forward_expand(gf, g.node);
  return gf;
}

double compute_graph(const Device& d, const Graph& g, ggml_cgraph* gf) {
  const auto t0 = Clock::now();
  const ggml_status st = ggml_backend_graph_compute(d.backend, gf);
  const double ms = ms_since(t0);
  if (st != GGML_STATUS_SUCCESS)
    throw std::runtime_error(g.what + " on " + d.label + ": ggml_backend_graph_compute returned " +
                             ggml_status_to_string(st));
  return ms;
}

double compute(const Device& d, Graph& g, Buffer& buf) { return compute_graph(d, g, prepare(d, g, buf)); }

namespace {

// ---- one case ------------------------------------------------------------------------------

// A golden case and its graph: the golden (whose inputs the graph borrows) and the array the
// result is read into (SET_ROWS: dst before the operator, which is also an input).
struct CaseGraph {
  const kvbench::Golden c;
  const std::string out_name;
  Graph g;
  kvbench::Array out;

  explicit CaseGraph(const std::string& manifest)
      : c(kvbench::Golden::load(manifest)), out_name(c.op() == "ggml.SET_ROWS" ? "dst" : "out") {}
  CaseGraph(const CaseGraph&) = delete;
  CaseGraph& operator=(const CaseGraph&) = delete;

  void build() {  // Skip: an operator or type not mapped here
    if (c.op() == "ggml.FLASH_ATTN_EXT") {
      flash_attn_ext(g, c);
    } else if (c.op() == "ggml.GET_ROWS") {
      get_rows(g, c);
    } else if (c.op() == "ggml.SET_ROWS") {
      out = c.output("dst");  // the contents before the operator: rows not indexed keep them
      set_rows(g, c, out);
    } else {
      throw Skip("operator " + c.op() + " is not implemented by kvbench-ggml");
    }
    const auto outputs = c.outputs();
    if (outputs != std::vector<std::string>{out_name})
      throw std::runtime_error(c.op() + " case " + c.name() + ": expected the one output '" + out_name + "'");
    if (c.op() != "ggml.SET_ROWS") out = c.output(out_name);
    expect_layout(out, g.result);
  }
};

void run_case(const Device& d, const std::string& manifest, const std::filesystem::path& actual_dir) {
  const auto t0 = Clock::now();
  CaseGraph cg(manifest);
  cg.build();
  const kvbench::Golden& c = cg.c;
  kvbench::Array& out = cg.out;

  Buffer buf;
  const double compute_ms = compute(d, cg.g, buf);
  ggml_backend_tensor_get(cg.g.result, out.bytes().data(), 0, out.bytes().size());

  kvbench::SafetensorsFile file;
  file.metadata["kvbench_case"] = c.name();
  file.metadata["backend"] = std::string("ggml ") + ggml_version() + " " + ggml_commit() + " " + d.label;
  kvbench::StoredTensor st;
  st.dtype = kvbench::safetensors_dtype(*kvbench::parse_dtype(out.dtype()));
  st.shape = out.shape();
  st.borrowed = std::as_const(out).bytes();
  file.tensors.emplace(cg.out_name, std::move(st));
  const auto stem = std::filesystem::path(manifest).stem().string();
  kvbench::write_safetensors((actual_dir / (stem + ".safetensors")).string(), file);
  std::fprintf(stderr, "kvbench-ggml: %s %s %s: compute %.2f ms, case %.1f ms\n", d.label.c_str(),
               c.op().c_str(), c.name().c_str(), compute_ms, ms_since(t0));
}

// ---- timing: one graph, uploaded once, computed W + N times ----------------------------------

struct Timing {
  int repeat = 0;              // --repeat N: timed computes (0: not the timing mode)
  int warmup = 2;              // --warmup W: untimed computes first (the first compiles pipelines)
  bool vk_timestamps = false;  // --vk-timestamps: ggml-vulkan's own timestamp queries as well
};

// --vk-timestamps sets GGML_VK_PERF_LOGGER before the Vulkan backend loads: ggml-vulkan then
// writes a timestamp before the graph's first node and after each node, and after each
// compute prints the differences to std::cerr ("Vulkan Timings:", "NAME: n x t us = T us",
// "Total time: T us."). While the computes run, file descriptor 2 goes to a temporary file.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()) {
    std::fflush(stderr);
    saved_ = file_ ? dup(2) : -1;
    if (saved_ < 0 || dup2(fileno(file_), 2) < 0) throw std::runtime_error("cannot redirect stderr");
  }
  ~StderrCapture() {
    if (saved_ >= 0) std::fputs(release().c_str(), stderr);  // an exception: pass it all on
    if (file_) std::fclose(file_);
  }
  std::string release() {  // stderr restored; what was written to it meanwhile
    std::cerr.flush();
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
    std::string text(4096, '\0');
    std::rewind(file_);
    size_t n = 0;
    while ((n += std::fread(text.data() + n, 1, text.size() - n, file_)) == text.size()) text.resize(2 * n);
    text.resize(n);
    return text;
  }

 private:
  std::FILE* file_;
  int saved_ = -1;
};

// The "Total time" of each block the perf logger printed, in ms; other lines go to stderr.
std::vector<double> perf_logger_totals(const std::string& text) {
  std::vector<double> ms;
  std::string other;
  bool in_block = false;
  for (size_t at = 0, end; at < text.size(); at = end + 1) {
    end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    if (line == "Vulkan Timings:") {
      in_block = true;
    } else if (line.rfind("Total time: ", 0) == 0) {
      ms.push_back(std::strtod(line.c_str() + 12, nullptr) / 1000);
      in_block = false;
    } else if (!in_block && line != "----------------") {
      other += line + "\n";
    }
  }
  std::fputs(other.c_str(), stderr);
  return ms;
}

double median(std::vector<double> v) {  // the mean of the middle two for an even count
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string json_string(const std::string& s) {
  std::string j = "\"";
  for (const unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      j += {'\\', static_cast<char>(ch)};
    } else if (ch < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", ch);
      j += esc;
    } else {
      j += static_cast<char>(ch);
    }
  }
  return j + '"';
}

std::string json_ms(double ms) {
  char num[32];
  std::snprintf(num, sizeof num, "%.6f", ms);
  return num;
}
std::string json_ms(const std::vector<double>& v) {
  std::string j = "[";
  for (size_t i = 0; i < v.size(); ++i) j += (i ? ", " : "") + json_ms(v[i]);
  return j + "]";
}

// One JSON line on stdout: {"case", "op", "device", "warmup_ms", "compute_ms", "median_ms"}
// (ggml_backend_graph_compute's wall time), with --vk-timestamps also "vk_timestamp_ms" and
// "vk_timestamp_median_ms"; a case it cannot run: {"case", "op", "device", "skip"}.
bool time_case(const Device& d, const std::string& manifest, const Timing& t) {
  CaseGraph cg(manifest);
  std::string line = "{\"case\": " + json_string(cg.c.name()) + ", \"op\": " + json_string(cg.c.op()) +
                     ", \"device\": " + json_string(d.label);
  Buffer buf;
  ggml_cgraph* gf = nullptr;
  try {
    cg.build();
    gf = prepare(d, cg.g, buf);
  } catch (const Skip& e) {
    std::printf("%s, \"skip\": %s}\n", line.c_str(), json_string(e.what()).c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "kvbench-ggml: not implemented: %s: %s\n", cg.c.name().c_str(), e.what());
    return false;
  }
  std::optional<StderrCapture> capture;
  if (t.vk_timestamps) capture.emplace();
  std::vector<double> wall;
  for (int i = 0; i < t.warmup + t.repeat; ++i) wall.push_back(compute_graph(d, cg.g, gf));
  const std::vector<double> warm(wall.begin(), wall.begin() + t.warmup),
      timed(wall.begin() + t.warmup, wall.end());
  line += ", \"warmup_ms\": " + json_ms(warm) + ", \"compute_ms\": " + json_ms(timed) +
          ", \"median_ms\": " + json_ms(median(timed));
  std::string vk;
  if (capture) {
    std::vector<double> stamps = perf_logger_totals(capture->release());
    if (stamps.size() != wall.size())
      throw std::runtime_error("GGML_VK_PERF_LOGGER printed " + std::to_string(stamps.size()) +
                               " totals for " + std::to_string(wall.size()) +
                               " computes (--vk-timestamps needs a Vulkan device)");
    stamps.erase(stamps.begin(), stamps.begin() + t.warmup);
    line += ", \"vk_timestamp_ms\": " + json_ms(stamps) +
            ", \"vk_timestamp_median_ms\": " + json_ms(median(stamps));
    vk = ", timestamps " + json_ms(median(stamps)) + " ms";
  }
  std::printf("%s}\n", line.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "kvbench-ggml: %s %s %s: median compute %.3f ms of %d%s (warm-up %s ms)\n",
               d.label.c_str(), cg.c.op().c_str(), cg.c.name().c_str(), median(timed), t.repeat, vk.c_str(),
               json_ms(warm).c_str());
  return true;
}

[[noreturn]] void on_ggml_abort(const char* message) {
  std::fprintf(stderr, "kvbench-ggml: ggml aborted: %s\n", message);
  std::fflush(stderr);
  _exit(1);
}

int usage() {
  std::fputs(
      "usage: kvbench-ggml --device cpu|vulkan|NAME GOLDEN_DIR ACTUAL_DIR\n"
      "       kvbench-ggml --device cpu|vulkan|NAME --repeat N [--warmup W] [--vk-timestamps] GOLDEN_DIR\n"
      "       kvbench-ggml --self-test --device cpu|vulkan|NAME\n"
      "  runs ggml.FLASH_ATTN_EXT, ggml.GET_ROWS and ggml.SET_ROWS goldens on llama.cpp's released ggml\n"
      "  (" KVBENCH_GGML_LIB_DIR
      "); exit 77 where a case is not implemented (kvbench: SKIP)\n"
      "  --repeat N: per case, the graph is built and its inputs uploaded once, then\n"
      "  ggml_backend_graph_compute runs W (default 2, untimed: the first compiles ggml's pipelines)\n"
      "  + N times; one JSON line per case on stdout: case, op, device, warmup_ms, compute_ms (N wall\n"
      "  times of the call, which returns when the device is done), median_ms. --vk-timestamps (Vulkan):\n"
      "  also vk_timestamp_ms and vk_timestamp_median_ms, ggml-vulkan's own timestamp queries around the\n"
      "  graph (GGML_VK_PERF_LOGGER)\n",
      stderr);
  return 2;
}

std::optional<int> count_arg(const std::string& s, int least) {
  int n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < least || n > 1000000) return std::nullopt;
  return n;
}

}  // namespace
}  // namespace kvbench_ggml

int main(int argc, char** argv) {
  using namespace kvbench_ggml;
  std::string device;
  bool self_test = false, timing_flags = false;
  Timing timing;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) {
      device = argv[++i];
    } else if (a.rfind("--device=", 0) == 0) {
      device = a.substr(9);
    } else if (a == "--self-test") {
      self_test = true;
    } else if ((a == "--repeat" || a == "--warmup") && i + 1 < argc) {
      const auto n = count_arg(argv[++i], a == "--repeat" ? 1 : 0);
      if (!n) return usage();
      (a == "--repeat" ? timing.repeat : timing.warmup) = *n;
      timing_flags = true;
    } else if (a == "--vk-timestamps") {
      timing.vk_timestamps = timing_flags = true;
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return usage();
    } else {
      dirs.push_back(a);
    }
  }
  const bool timed = timing.repeat > 0;
  if (device.empty() || (timing_flags && (!timed || self_test)) ||
      dirs.size() != (self_test ? 0u
                      : timed   ? 1u
                                : 2u))
    return usage();
  if (const char* v = std::getenv("KVBENCH_GGML_VERBOSE"); v && *v && std::strcmp(v, "0") != 0)
    g_log_level = GGML_LOG_LEVEL_DEBUG;
  if (timing.vk_timestamps) setenv("GGML_VK_PERF_LOGGER", "1", 1);  // read when the backend loads
  ggml_log_set(log_to_stderr, nullptr);
  ggml_set_abort_callback(on_ggml_abort);
  try {
    const auto t0 = Clock::now();
    Device d = open_device(device);
    std::fprintf(stderr, "kvbench-ggml: ggml %s (%s) on %s, started in %.0f ms (%s)\n", ggml_version(),
                 ggml_commit(), d.label.c_str(), ms_since(t0), loaded_libraries().c_str());
    int rc = 0;
    if (self_test) {
      rc = kvbench_ggml::self_test(d);
    } else {
      if (!timed) std::filesystem::create_directories(dirs[1]);
      const auto manifests = kvbench::golden_manifests(dirs[0]);
      if (manifests.empty()) throw std::runtime_error("no golden cases in " + dirs[0]);
      for (const auto& m : manifests) {
        try {
          if (timed) {
            if (!time_case(d, m, timing)) rc = 77;
          } else {
            run_case(d, m, dirs[1]);
          }
        } catch (const Skip& e) {
          std::fprintf(stderr, "kvbench-ggml: not implemented: %s: %s\n",
                       std::filesystem::path(m).stem().c_str(), e.what());
          rc = 77;
        }
      }
    }
    ggml_backend_free(d.backend);
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvbench-ggml: error: %s\n", e.what());
    return 1;
  }
}
