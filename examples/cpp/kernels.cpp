#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace example {
namespace {

using kvbench::Array;
using kvbench::round_to;

// One step toward +inf in the output's dtype (the planted error).
double next_up(const std::string& dtype, double v) {
  double step = std::ldexp(std::fabs(v) > 0 ? std::fabs(v) : 1.0, -10);
  while (round_to(dtype, v + step) == v) step *= 2;
  return round_to(dtype, v + step);
}

}  // namespace

std::map<std::string, Array> dequantize_group(const kvbench::Golden& g, Options o) {
  const Array& x = g.input("x");
  const Array& scale = g.input("scale");
  const std::string formula = g.text("formula");
  const bool extra = g.number("with_zero_point") != 0;
  const int64_t group = static_cast<int64_t>(g.number("group_size"));
  const int64_t rows = x.shape()[0], length = x.shape()[1], groups = scale.shape()[1];
  Array y = g.output("y");
  const std::string Y = y.dtype(), S = scale.dtype(), code_format = g.text("code_format");
  // MXINT8's i8 code is worth code * 2^-6; NVFP4 multiplies by a tensor scale after the block's.
  const double code_unit = code_format == "mxint8" ? 1.0 / 64 : 1.0;
  const bool nvfp4 = code_format == "nvfp4";
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < length; ++c) {
      const size_t i = static_cast<size_t>(r * length + c), k = static_cast<size_t>(r * groups + c / group);
      const double q = x.get(i) * code_unit, s = scale.get(k);
      double v;
      if (nvfp4) {  // (value * block scale) exactly in f32, then * the tensor scale in f32
        v = round_to("f32", round_to("f32", q * s) * g.input("tensor_scale").get(0));
      } else if (formula == "ppl") {  // the product in the scale dtype, then the output's
        v = round_to(S, q * s);
      } else if (formula == "onednn") {  // (q - zp) * s in f32
        v = round_to("f32", (q - (extra ? g.input("zero_point").get(k) : 0)) * s);
      } else {  // ascend: (q + offset) in f32 (no offset: q), times s in f32
        v = round_to("f32", (extra ? round_to("f32", q + g.input("offset").get(k)) : q) * s);
      }
      y.set(i, round_to(Y, v));
    }
  if (o.plant) {  // at the first finite element (FP8 codes decode to NaN and infinities too)
    size_t i = 0;
    while (i + 1 < y.size() && !std::isfinite(y.get(i))) ++i;
    y.set(i, next_up(Y, y.get(i)));
  }
  return {{"y", y}};
}

std::map<std::string, Array> key_value_cache(const kvbench::Golden& g, Options o) {
  const Array* current[2] = {&g.input("current_key"), &g.input("current_value")};
  const int64_t B = g.size("batch"), S = g.size("seqlen"), H = g.size("num_heads"), D = g.size("head_dim");
  const int64_t L = static_cast<int64_t>(g.number("num_layer")),
                layer = static_cast<int64_t>(g.number("layer_idx"));
  const int64_t bits = static_cast<int64_t>(g.number("quant_bit")),
                repeat = static_cast<int64_t>(g.number("num_repeat"));
  const int64_t group = bits ? static_cast<int64_t>(g.number("quant_group")) : 1;
  const bool layout1 = g.number("cache_layout") != 0;
  const int64_t p = static_cast<int64_t>(g.input("start_pos").get(0));
  Array cache = g.output("cache");
  Array scale = bits ? g.output("scale") : Array();
  const int64_t max_b = cache.shape()[layout1 ? 1 : 0], max_s = cache.shape()[layout1 ? 4 : 3];
  const std::string T1 = current[0]->dtype();
  // The flat index of (batch b, k/v c, position t, head h) at channel 0, for a last dim of `width`.
  auto at = [&](int64_t b, int64_t c, int64_t t, int64_t h, int64_t width) {
    const int64_t row = layout1 ? ((((layer * max_b + b) * 2 + c) * H + h) * max_s + t)
                                : ((((b * L + layer) * 2 + c) * max_s + t) * H + h);
    return static_cast<size_t>(row * width);
  };
  const double qmax = bits ? (1 << (bits - 1)) - 1 : 0;
  for (int64_t c = 0; c < 2; ++c)  // store
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t h = 0; h < H; ++h) {
          const size_t in = static_cast<size_t>(((b * S + s) * H + h) * D);
          const size_t to = at(b, c, p + s, h, D);
          for (int64_t g0 = 0; g0 < D; g0 += group) {
            if (!bits) {
              cache.set(to + g0, current[c]->get(in + g0));
              continue;
            }
            double m = 0;
            for (int64_t d = g0; d < g0 + group; ++d) m = std::max(m, std::fabs(current[c]->get(in + d)));
            const double st = std::max(round_to(T1, m / qmax), round_to(T1, 1e-5));
            for (int64_t d = g0; d < g0 + group; ++d) {
              const double quotient = round_to(T1, current[c]->get(in + d) / st);
              const double q = o.plant ? std::trunc(quotient) : std::nearbyint(quotient);
              cache.set(to + d, std::clamp(q, -qmax, qmax));
            }
            scale.set(at(b, c, p + s, h, D / group) + g0 / group, st);
          }
        }
  std::map<std::string, Array> out{{"cache", cache}};
  if (bits) out.emplace("scale", scale);
  for (int64_t c = 0; c < 2; ++c) {  // fetch: every position up to p + S, each kv head `repeat` times
    Array rows = g.output(c == 0 ? "key" : "value");
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < p + S; ++t)
        for (int64_t oh = 0; oh < H * repeat; ++oh)
          for (int64_t d = 0; d < D; ++d) {
            const int64_t h = oh / repeat;
            const double code = cache.get(at(b, c, t, h, D) + d);
            const double v =
                bits ? round_to(scale.dtype(), code * scale.get(at(b, c, t, h, D / group) + d / group))
                     : code;
            rows.set(static_cast<size_t>(((b * (p + S) + t) * H * repeat + oh) * D + d), round_to(T1, v));
          }
    if (o.plant && !bits && c == 0) rows.set(0, next_up(T1, rows.get(0)));  // no codes to truncate
    out.emplace(c == 0 ? "key" : "value", rows);
  }
  return out;
}

}  // namespace example
