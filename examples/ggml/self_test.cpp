// kvbench-ggml --self-test (README.md here, "Self-test"): one flash attention and a
// set_rows/get_rows round trip on a ggml device, against plain loops; no golden needed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "kvbench_ggml.hpp"

namespace kvbench_ggml {
namespace {

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

}  // namespace

int self_test(const Device& d) {
  int rc = 0;
  for (auto test : {self_test_flash_attn, self_test_rows}) {
    try {
      if (!test(d)) rc = 1;
    } catch (const Skip& e) {
      std::fprintf(stderr, "kvbench-ggml: self-test: %s\n", e.what());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace kvbench_ggml
