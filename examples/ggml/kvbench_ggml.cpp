// kvbench-ggml: llama.cpp's released ggml libraries as a backend of `kvbench run --backend`
// (examples/ggml/README.md, specs/golden-format.md "Another backend in the loop").
//
//   kvbench-ggml --device cpu|vulkan|NAME GOLDEN_DIR ACTUAL_DIR
//   kvbench-ggml --self-test --device cpu|vulkan|NAME
//
// For each case in GOLDEN_DIR it builds the ggml graph of the case's operator
// (ggml.FLASH_ATTN_EXT, ggml.GET_ROWS, ggml.SET_ROWS), computes it on the device and writes
// ACTUAL_DIR/<stem>.safetensors with every output of the golden. Exit 0: all written; 77: a
// case it does not implement (unknown operator or type, or the device's supports_op says
// no; one line says why, and the other cases are still written); 1: an error.
#include <ggml-alloc.h>
#include <ggml-backend.h>
#include <ggml.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "golden/safetensors.hpp"  // in-tree: kvbench's own safetensors writer
#include "kvbench/golden.hpp"

#ifndef KVBENCH_GGML_LIB_DIR
#error "KVBENCH_GGML_LIB_DIR (the folder of libggml-*.so) must be defined"
#endif

namespace {

struct Skip : std::runtime_error {  // exit 77: not implemented here
  using std::runtime_error::runtime_error;
};

using Ne = std::array<int64_t, 4>;
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

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

struct Device {
  ggml_backend_dev_t dev = nullptr;
  ggml_backend_t backend = nullptr;
  std::string label;  // "Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits))"
};

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

struct Graph {
  std::unique_ptr<ggml_context, decltype(&ggml_free)> ctx{nullptr, ggml_free};
  std::vector<std::pair<ggml_tensor*, std::span<const uint8_t>>> inputs;
  ggml_tensor* node = nullptr;    // the operator's node (asked of supports_op)
  ggml_tensor* result = nullptr;  // what is read back: the node, or SET_ROWS's destination
  std::string what;               // for messages: the op and its types

  Graph() {
    ggml_init_params p{ggml_tensor_overhead() * 16 + ggml_graph_overhead(), nullptr, /*no_alloc=*/true};
    ctx.reset(ggml_init(p));
    if (!ctx) throw std::runtime_error("ggml_init failed");
  }
  ggml_tensor* tensor(ggml_type type, Ne ne, const char* name) {
    if (ne[0] % ggml_blck_size(type) != 0)
      throw std::runtime_error(std::string(name) + ": " + std::to_string(ne[0]) +
                               " columns are not whole blocks of " + ggml_type_name(type) + " (" +
                               std::to_string(ggml_blck_size(type)) + ")");
    ggml_tensor* t = ggml_new_tensor(ctx.get(), type, 4, ne.data());
    ggml_set_name(t, name);
    return t;
  }
};

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

// Allocates the graph's tensors on the device, uploads the inputs and computes. Returns the
// compute time in ms.
struct Buffer {
  ggml_backend_buffer_t b = nullptr;
  ~Buffer() { ggml_backend_buffer_free(b); }
};
double compute(const Device& d, Graph& g, Buffer& buf) {
  if (!ggml_backend_dev_supports_op(d.dev, g.node))
    throw Skip(d.label + " does not support " + g.what + " (ggml_backend_dev_supports_op)");
  buf.b = ggml_backend_alloc_ctx_tensors(g.ctx.get(), d.backend);
  if (!buf.b) throw std::runtime_error("could not allocate the tensors of " + g.what + " on " + d.label);
  for (const auto& [t, bytes] : g.inputs) ggml_backend_tensor_set(t, bytes.data(), 0, bytes.size());
  ggml_cgraph* gf = ggml_new_graph(g.ctx.get());
  ggml_build_forward_expand(gf, g.node);
  const auto t0 = Clock::now();
  const ggml_status st = ggml_backend_graph_compute(d.backend, gf);
  const double ms = ms_since(t0);
  if (st != GGML_STATUS_SUCCESS)
    throw std::runtime_error(g.what + " on " + d.label + ": ggml_backend_graph_compute returned " +
                             ggml_status_to_string(st));
  return ms;
}

// ---- one case ------------------------------------------------------------------------------

void run_case(const Device& d, const std::string& manifest, const std::filesystem::path& actual_dir) {
  const auto t0 = Clock::now();
  const kvbench::Golden c = kvbench::Golden::load(manifest);
  const std::string out_name = c.op() == "ggml.SET_ROWS" ? "dst" : "out";
  Graph g;
  kvbench::Array out;
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

  Buffer buf;
  const double compute_ms = compute(d, g, buf);
  ggml_backend_tensor_get(g.result, out.bytes().data(), 0, out.bytes().size());

  kvbench::SafetensorsFile file;
  file.metadata["kvbench_case"] = c.name();
  file.metadata["backend"] = std::string("ggml ") + ggml_version() + " " + ggml_commit() + " " + d.label;
  kvbench::StoredTensor st;
  st.dtype = kvbench::safetensors_dtype(*kvbench::parse_dtype(out.dtype()));
  st.shape = out.shape();
  st.borrowed = std::as_const(out).bytes();
  file.tensors.emplace(out_name, std::move(st));
  const auto stem = std::filesystem::path(manifest).stem().string();
  kvbench::write_safetensors((actual_dir / (stem + ".safetensors")).string(), file);
  std::fprintf(stderr, "kvbench-ggml: %s %s %s: compute %.2f ms, case %.1f ms\n", d.label.c_str(),
               c.op().c_str(), c.name().c_str(), compute_ms, ms_since(t0));
}

// ---- self-test: one flash attention and a set_rows/get_rows round trip, against loops -------

uint32_t g_rng = 12345;
float uniform() {  // [-1, 1)
  g_rng = g_rng * 1664525u + 1013904223u;
  return static_cast<float>(g_rng >> 8) / static_cast<float>(1u << 23) - 1.0f;
}
std::span<const uint8_t> bytes_of(const auto& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(v[0])};
}

bool self_test_flash_attn(const Device& d) {
  const int64_t D = 64, nb = 3, H = 4, Hkv = 2, nkv = 37, B = 2;
  const float scale = 0.125f;
  std::vector<float> q(D * nb * H * B), sinks(H);
  std::vector<ggml_fp16_t> k(D * nkv * Hkv * B), v(k.size()), mask(nkv * nb);
  for (auto& x : q) x = uniform();
  for (auto& x : k) x = ggml_fp32_to_fp16(uniform());
  for (auto& x : v) x = ggml_fp32_to_fp16(uniform());
  for (auto& x : sinks) x = uniform();
  for (int64_t i = 0; i < nb; ++i)  // causal over the last nb keys
    for (int64_t j = 0; j < nkv; ++j)
      mask[i * nkv + j] = ggml_fp32_to_fp16(j <= nkv - nb + i ? 0.0f : -INFINITY);
  Graph g;
  ggml_tensor* tq = g.tensor(GGML_TYPE_F32, {D, nb, H, B}, "q");
  ggml_tensor* tk = g.tensor(GGML_TYPE_F16, {D, nkv, Hkv, B}, "k");
  ggml_tensor* tv = g.tensor(GGML_TYPE_F16, {D, nkv, Hkv, B}, "v");
  ggml_tensor* tm = g.tensor(GGML_TYPE_F16, {nkv, nb, 1, 1}, "mask");
  ggml_tensor* ts = g.tensor(GGML_TYPE_F32, {H, 1, 1, 1}, "sinks");
  g.inputs = {
      {tq, bytes_of(q)}, {tk, bytes_of(k)}, {tv, bytes_of(v)}, {tm, bytes_of(mask)}, {ts, bytes_of(sinks)}};
  g.node = g.result = ggml_flash_attn_ext(g.ctx.get(), tq, tk, tv, tm, scale, 0.0f, 0.0f);
  ggml_flash_attn_ext_add_sinks(g.node, ts);
  ggml_prec_set_acc(g.node, GGML_PREC_F32);
  g.what = "FLASH_ATTN_EXT f16 mask sinks";
  Buffer buf;
  const double ms = compute(d, g, buf);
  std::vector<float> out(D * H * nb * B);
  ggml_backend_tensor_get(g.result, out.data(), 0, out.size() * sizeof(float));
  double worst = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < nb; ++i) {
        const int64_t hk = h / (H / Hkv);
        std::vector<double> s(nkv);
        double m = sinks[h], den = 0;
        for (int64_t j = 0; j < nkv; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < D; ++x)
            dot +=
                q[((b * H + h) * nb + i) * D + x] * ggml_fp16_to_fp32(k[((b * Hkv + hk) * nkv + j) * D + x]);
          s[j] = scale * dot + ggml_fp16_to_fp32(mask[i * nkv + j]);
          m = std::max(m, s[j]);
        }
        for (int64_t j = 0; j < nkv; ++j) den += s[j] = std::exp(s[j] - m);
        den += std::exp(sinks[h] - m);
        for (int64_t x = 0; x < D; ++x) {
          double o = 0;
          for (int64_t j = 0; j < nkv; ++j)
            o += s[j] * ggml_fp16_to_fp32(v[((b * Hkv + hk) * nkv + j) * D + x]);
          worst = std::max(worst, std::abs(o / den - out[((b * nb + i) * H + h) * D + x]));
        }
      }
  const bool ok = worst <= 5e-3;  // Q is rounded to f16 for the products on some paths
  std::fprintf(stderr, "kvbench-ggml: self-test %s %s: compute %.2f ms, max |error| %.3g: %s\n",
               d.label.c_str(), g.what.c_str(), ms, worst, ok ? "ok" : "FAILED");
  return ok;
}

// q8_0, as ggml's reference quantizer: 32 values, an f16 scale d = amax / 127, codes round(x / d).
struct BlockQ8 {
  ggml_fp16_t d;
  int8_t qs[32];
};
BlockQ8 quantize_q8(const float* x) {
  float amax = 0;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::abs(x[i]));
  const float dd = amax / 127, id = dd ? 1 / dd : 0;
  BlockQ8 b{ggml_fp32_to_fp16(dd), {}};
  for (int i = 0; i < 32; ++i) b.qs[i] = static_cast<int8_t>(std::round(x[i] * id));
  return b;
}

bool self_test_rows(const Device& d) {
  const int64_t cols = 64, rows = 8, mats = 2, n_idx = 3;
  std::vector<float> init(cols * rows * mats), src(cols * n_idx * mats);
  for (auto& x : init) x = uniform();
  for (auto& x : src) x = 4 * uniform();
  std::vector<BlockQ8> dst(init.size() / 32);
  for (size_t i = 0; i < dst.size(); ++i) dst[i] = quantize_q8(&init[i * 32]);
  const std::vector<int64_t> set_idx = {5, 1, 6, 0, 7, 3};  // [mats][n_idx]
  std::vector<int32_t> all_rows(rows * mats);
  for (int64_t i = 0; i < rows * mats; ++i) all_rows[i] = static_cast<int32_t>(i % rows);
  Graph g;
  ggml_tensor* tdst = g.tensor(GGML_TYPE_Q8_0, {cols, rows, mats, 1}, "dst");
  ggml_tensor* tsrc = g.tensor(GGML_TYPE_F32, {cols, n_idx, mats, 1}, "src");
  ggml_tensor* tsi = g.tensor(GGML_TYPE_I64, {n_idx, mats, 1, 1}, "set_idx");
  ggml_tensor* tgi = g.tensor(GGML_TYPE_I32, {rows, mats, 1, 1}, "get_idx");
  g.inputs = {
      {tdst, bytes_of(dst)}, {tsrc, bytes_of(src)}, {tsi, bytes_of(set_idx)}, {tgi, bytes_of(all_rows)}};
  ggml_tensor* set = ggml_set_rows(g.ctx.get(), tdst, tsrc, tsi);
  g.node = set;
  g.what = "SET_ROWS q8_0 index i64";
  if (!ggml_backend_dev_supports_op(d.dev, set)) throw Skip(d.label + " does not support " + g.what);
  g.node = g.result = ggml_get_rows(g.ctx.get(), set, tgi);
  g.what = "SET_ROWS q8_0 + GET_ROWS q8_0";
  Buffer buf;
  const double ms = compute(d, g, buf);
  std::vector<float> out(cols * rows * mats);
  std::vector<BlockQ8> after(dst.size());
  ggml_backend_tensor_get(g.result, out.data(), 0, out.size() * sizeof(float));
  ggml_backend_tensor_get(tdst, after.data(), 0, after.size() * sizeof(BlockQ8));
  double worst_set = 0, worst_kept = 0;
  bool kept_bytes = true;
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t r = 0; r < rows; ++r) {
      const auto at = std::find(set_idx.begin() + m * n_idx, set_idx.begin() + (m + 1) * n_idx, r);
      const bool written = at != set_idx.begin() + (m + 1) * n_idx;
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t flat = (m * rows + r) * cols + c;
        const BlockQ8& blk = after[flat / 32];
        const float got = out[flat], scale = ggml_fp16_to_fp32(blk.d);
        if (written) {  // the f32 row it was set from, within half a step of its block
          const float want = src[(m * n_idx + (at - set_idx.begin() - m * n_idx)) * cols + c];
          worst_set = std::max(worst_set, double(std::abs(got - want) / scale));
        } else {  // the initial row, exactly as decoded, its bytes unchanged
          worst_kept = std::max(worst_kept, double(std::abs(got - scale * dst[flat / 32].qs[flat % 32])));
          kept_bytes = kept_bytes && std::memcmp(&blk, &dst[flat / 32], sizeof blk) == 0;
        }
      }
    }
  // half a step, plus the code times the f16 rounding of the step: 127 * 2^-11 steps
  const bool ok = worst_set <= 0.5 + 127.0 / 2048 + 1e-3 && worst_kept == 0 && kept_bytes;
  std::fprintf(
      stderr,
      "kvbench-ggml: self-test %s %s: compute %.2f ms, written rows max |error| %.3g steps, kept rows max "
      "|error| %.3g, kept bytes %s: %s\n",
      d.label.c_str(), g.what.c_str(), ms, worst_set, worst_kept, kept_bytes ? "equal" : "CHANGED",
      ok ? "ok" : "FAILED");
  return ok;
}

[[noreturn]] void on_ggml_abort(const char* message) {
  std::fprintf(stderr, "kvbench-ggml: ggml aborted: %s\n", message);
  std::fflush(stderr);
  _exit(1);
}

int usage() {
  std::fputs(
      "usage: kvbench-ggml --device cpu|vulkan|NAME GOLDEN_DIR ACTUAL_DIR\n"
      "       kvbench-ggml --self-test --device cpu|vulkan|NAME\n"
      "  runs ggml.FLASH_ATTN_EXT, ggml.GET_ROWS and ggml.SET_ROWS goldens on llama.cpp's released ggml\n"
      "  (" KVBENCH_GGML_LIB_DIR "); exit 77 where a case is not implemented (kvbench: SKIP)\n",
      stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device;
  bool self_test = false;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) {
      device = argv[++i];
    } else if (a.rfind("--device=", 0) == 0) {
      device = a.substr(9);
    } else if (a == "--self-test") {
      self_test = true;
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return usage();
    } else {
      dirs.push_back(a);
    }
  }
  if (device.empty() || dirs.size() != (self_test ? 0u : 2u)) return usage();
  if (const char* v = std::getenv("KVBENCH_GGML_VERBOSE"); v && *v && std::strcmp(v, "0") != 0)
    g_log_level = GGML_LOG_LEVEL_DEBUG;
  ggml_log_set(log_to_stderr, nullptr);
  ggml_set_abort_callback(on_ggml_abort);
  try {
    const auto t0 = Clock::now();
    Device d = open_device(device);
    std::fprintf(stderr, "kvbench-ggml: ggml %s (%s) on %s, started in %.0f ms (%s)\n", ggml_version(),
                 ggml_commit(), d.label.c_str(), ms_since(t0), loaded_libraries().c_str());
    int rc = 0;
    if (self_test) {
      for (auto test : {self_test_flash_attn, self_test_rows}) {
        try {
          if (!test(d)) rc = 1;
        } catch (const Skip& e) {
          std::fprintf(stderr, "kvbench-ggml: self-test: %s\n", e.what());
          rc = 1;
        }
      }
    } else {
      std::filesystem::create_directories(dirs[1]);
      const auto manifests = kvbench::golden_manifests(dirs[0]);
      if (manifests.empty()) throw std::runtime_error("no golden cases in " + dirs[0]);
      for (const auto& m : manifests) {
        try {
          run_case(d, m, dirs[1]);
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
