// aclnn.FusedInferAttentionScoreV3: where the elements of K/V and their antiquant scales
// are, and the quantized K/V the conformance cases run on (spec "Inputs").
#include "ops/fused_infer_attention/fia_inputs.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "core/clones.hpp"
#include "core/hifloat8.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "ref/quant.hpp"

namespace kvbench {

// HiF8 K/V codes are x / scale with scale = max|x| / kFiaHif8Divisor (fia_quantized).
constexpr double kFiaHif8Divisor = 15.0;

std::vector<int64_t> fia_block_table(const FiaParams& p, uint64_t seed) {
  std::vector<int64_t> ids(static_cast<size_t>(p.num_blocks));
  std::iota(ids.begin(), ids.end(), 0);
  const CounterRng rng(seed, "blockTable");
  for (size_t i = ids.size(); i > 1; --i)
    std::swap(ids[i - 1], ids[static_cast<size_t>(rng.integer(i, 0, static_cast<int64_t>(i) - 1))]);
  const int64_t spare = ids.back();
  std::vector<int64_t> table(static_cast<size_t>(p.B * p.max_blocks), spare);
  size_t next = 0;
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t k = 0; k * p.block_size < p.s2b[b]; ++k) table[b * p.max_blocks + k] = ids[next++];
  return table;
}

int64_t fia_cache_index(const FiaParams& p, int64_t blk, int64_t r, int64_t hk, int64_t d, int64_t dim) {
  if (p.nz) return (((blk * p.Nkv + hk) * (dim / 16) + d / 16) * p.block_size + r) * 16 + d % 16;
  return p.bnnbsd ? ((blk * p.Nkv + hk) * p.block_size + r) * dim + d
                  : ((blk * p.block_size + r) * p.Nkv + hk) * dim + d;
}

int64_t fia_kv_index(const FiaParams& p, const std::vector<int64_t>& table, int64_t b, int64_t t, int64_t hk,
                     int64_t d, int64_t dim) {
  if (p.tensorlist) return p.list_strides(b, dim).at(0, t, hk, d);  // within key.b / value.b
  if (!p.paged()) return p.kv_strides(dim).at(b, p.kv_start[b] + t, hk, d);
  return fia_cache_index(p, table[b * p.max_blocks + t / p.block_size], t % p.block_size, hk, d, dim);
}

FiaSide fia_side(const FiaParams& p, int side) {
  FiaSide s;
  s.data = side == 0 ? "key" : "value";
  s.scale = side == 0 ? "keyAntiquantScale" : "valueAntiquantScale";
  s.offset = side == 0 ? "keyAntiquantOffset" : "valueAntiquantOffset";
  s.dim = side == 0 ? p.D : p.Dv;
  s.mode = side == 0 ? p.quant.key_mode : p.quant.value_mode;
  s.step = (s.mode == 0 && !p.quant.per_tensor) || s.mode == 6 ? 1 : 0;
  s.group_shift = s.mode == 6 ? 5 : 0;  // 32 channels a group
  if (p.quant.combined) {
    s.scale = "antiquantScale";
    s.offset = "antiquantOffset";
    s.base = side * static_cast<int64_t>(shape_numel(p.combined_antiquant_shape()) / 2);
  }
  return s;
}

std::function<double(size_t)> fia_mask_values(const FiaParams& p, uint64_t seed) {
  if (p.compressed_mask()) return [](size_t i) { return i % 2048 > i / 2048 ? 1.0 : 0.0; };
  // Rows and columns are the padded tensors' positions (left padding moves a batch's first
  // row and key).
  const int64_t cols = p.mask_row_stride(), rows = p.ifa() ? 1 : p.S1;
  const bool per_batch = p.mask_batch_stride() != 0, band0 = p.sparse == 0 && !p.ifa() && !p.left_padded();
  int64_t end_min = p.S1;  // where the last masked_rows rows end
  for (int64_t b = 0; b < p.B; ++b) end_min = std::min(end_min, p.q_start[b] + p.s1b[b]);
  return [&p, rng = CounterRng(seed, "attenMask"), cols, rows, per_batch, band0, end_min](size_t k) {
    const int64_t j = static_cast<int64_t>(k) % cols, i = static_cast<int64_t>(k) / cols % rows;
    const int64_t bm = static_cast<int64_t>(k) / (cols * rows);
    const int64_t end = per_batch ? p.q_start[bm] + p.s1b[bm] : end_min;
    bool anchor = band0 && j == std::max<int64_t>(0, i - std::min<int64_t>(p.pre, i));
    for (int64_t b = 0; b < p.B && !band0; ++b) anchor |= (!per_batch || b == bm) && j == p.kv_start[b];
    bool masked = rng.integer(k, 0, 3) == 0 && !anchor;
    if (band0 && (j - i < -p.pre || j - i > p.next)) masked = true;
    if (p.masked_rows && i >= end - p.masked_rows && i < end) masked = true;
    return masked ? 1.0 : 0.0;
  };
}

void fia_poison_cache(const FiaParams& p, uint64_t seed, Tensor& t, int64_t dim) {
  std::vector<uint8_t> used(static_cast<size_t>(p.num_blocks * p.block_size), 0);
  const std::vector<int64_t> table = fia_block_table(p, seed);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t tok = 0; tok < p.s2b[b]; ++tok)
      used[table[b * p.max_blocks + tok / p.block_size] * p.block_size + tok % p.block_size] = 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t row = 0; row < p.num_blocks * p.block_size; ++row) {
    if (used[row]) continue;
    const int64_t blk = row / p.block_size, r = row % p.block_size;
    for (int64_t hk = 0; hk < p.Nkv; ++hk)
      for (int64_t d = 0; d < dim; ++d)
        t.set(static_cast<size_t>(fia_cache_index(p, blk, r, hk, d, dim)), nan);
  }
}

int64_t fia_total_keys(const FiaParams& p) {
  int64_t n = 0;
  for (int64_t b = 0; b < p.B; ++b) n += p.s2b[b];
  return n;
}

FiaOriginals::FiaOriginals(const FiaParams& p, const Args& a, int side)
    : rng_(a.seed(), fia_side(p, side).data + "_unquantized"),
      lo_(a.range(fia_side(p, side).data).first),
      hi_(a.range(fia_side(p, side).data).second),
      dtype_(p.q) {
  // spread^e, e = -1 + 2k / (dim - 1) for k a seeded permutation of the channels: every two
  // channels' scales at least spread^(2 / (dim - 1)) apart, so any permutation of them moves
  // some channel's scale by that ratio or more (spec "antiquant_scale_spread").
  const int64_t dim = fia_side(p, side).dim;
  if (p.quant.spread == 1 || !p.quant.per_channel(side) || dim < 2) return;
  const CounterRng rng(a.seed(), fia_side(p, side).data + "_channel_spread");
  factors_.resize(static_cast<size_t>(p.Nkv * dim));
  std::vector<int64_t> k(static_cast<size_t>(dim));
  for (int64_t hk = 0; hk < p.Nkv; ++hk) {
    std::iota(k.begin(), k.end(), 0);
    for (size_t i = k.size(); i > 1; --i)
      std::swap(k[i - 1], k[static_cast<size_t>(rng.integer(hk * dim + static_cast<int64_t>(i), 0,
                                                            static_cast<int64_t>(i) - 1))]);
    for (int64_t d = 0; d < dim; ++d)
      factors_[static_cast<size_t>(hk * dim + d)] =
          std::pow(p.quant.spread, -1.0 + 2.0 * static_cast<double>(k[static_cast<size_t>(d)]) /
                                              static_cast<double>(dim - 1));
  }
}

namespace {

// nearbyint for |v| < 2^51 (the quotients here are bounded by the f16/bf16 range over a
// scale of at least 1e-4): adding and subtracting 1.5 * 2^52 rounds to an integer, half to
// even, in the default rounding mode, without a library call (IEEE semantics: the
// compiler may not fold it away without -ffast-math). A -0 result becomes +0, which the
// integer code does not see.
inline double round_half_even(double v) {
  constexpr double big = 0x1.8p52;
  return (v + big) - big;
}

// The quantizer's two passes over a token row, each its own function for the AVX2 clone
// (every loop in them vectorizes; the bits are the same in both clones).
// Pass 1: the row's random bits.
KVB_CLONES void draw_bits(const FiaOriginals& x, int64_t e, int64_t dim, uint64_t* bits) {
  for (int64_t d = 0; d < dim; ++d) bits[d] = x.bits(e + d);
}
// Pass 1, a row whose channels have their own groups k0, k0 + 1, ...: its least and
// greatest bits per group.
KVB_CLONES void widen_ranges(const uint64_t* bits, int64_t dim, uint64_t* lo, uint64_t* hi) {
  for (int64_t d = 0; d < dim; ++d) {
    lo[d] = std::min(lo[d], bits[d]);
    hi[d] = std::max(hi[d], bits[d]);
  }
}
// Pass 2: the row's originals over their scales, rounded half to even, less their offsets,
// clamped to the codes' range (float codes: the quotient, which the store rounds to the code).
KVB_CLONES void code_row(const FiaOriginals& x, int64_t e, int64_t dim, const double* scale,
                         const double* offset, bool float_codes, double qmin, double qmax, double* codes) {
  x.fill(e, dim, codes);
  if (float_codes) {
    for (int64_t d = 0; d < dim; ++d) codes[d] /= scale[d];
    return;
  }
  for (int64_t d = 0; d < dim; ++d)
    codes[d] = std::clamp(round_half_even(codes[d] / scale[d]) - offset[d], qmin, qmax);
}
// The store of FP8 (E4M3FN) codes, saturating at +-448 as the engines store them: its own
// function so that the branch-free encoder vectorizes in the AVX2 and AVX-512 clones.
KVB_CLONES_AVX512 void store_e4m3fn_row(const double* values, int64_t dim, uint8_t* codes) {
  for (int64_t d = 0; d < dim; ++d)
    codes[d] = static_cast<uint8_t>(float_format_detail::fp8_code_bits<3, 7, true>(values[d], true));
}

}  // namespace

// hif8_encode(x, Hif8Overflow::saturate) of each value, from the double's bits: the
// magnitude rounded half away from zero at its binade's quantum by an integer add and mask
// (a carry moves it to the next binade, exactly), then the code of the rounded value by
// table. Bit for bit hif8_encode's (tests/test_fia_hifloat8.cpp); the golden's 32k HiF8
// decode spends no more on its codes than int8 on its own (spec "HIFLOAT8 KV antiquant").
namespace {

// hif8_encode(x, Hif8Overflow::saturate) of every double, by its top 16 bits (sign, exponent
// and the mantissa's top four bits): TA rounds half away from zero, so a value rounds up
// exactly when the first bit below the kept mantissa (at most three bits: the fourth is the
// first dropped) is set, whatever follows it; the denormal binades keep none and the saturated
// ones none that matter. So the code is a function of those 16 bits, but for a NaN whose
// payload lies below them (an infinity's top bits), set apart by one select.
const std::array<uint8_t, 65536>& hif8_code_table() {
  static const std::array<uint8_t, 65536> table = [] {
    std::array<uint8_t, 65536> t{};
    for (uint64_t key = 0; key < t.size(); ++key)
      t[key] = hif8_encode(std::bit_cast<double>(key << 48), Hif8Overflow::saturate);
    return t;
  }();
  return table;
}

}  // namespace

// hif8_encode(x, Hif8Overflow::saturate) of each value: one byte table lookup by the double's
// top 16 bits (hif8_code_table). Bit for bit hif8_encode's (tests/test_fia_hifloat8.cpp).
void fia_store_hif8_row(const double* values, int64_t dim, uint8_t* codes) {
  const std::array<uint8_t, 65536>& table = hif8_code_table();
  constexpr uint64_t kAbs = ~(uint64_t{1} << 63), kInf = 0x7FF0000000000000ull;
  for (int64_t d = 0; d < dim; ++d) {
    const uint64_t bits = std::bit_cast<uint64_t>(values[d]);
    const uint8_t code = table[bits >> 48];
    codes[d] = (bits & kAbs) > kInf ? uint8_t{0x80} : code;  // NaN
  }
}

TensorSet fia_quantized(const FiaParams& p, const Args& a, int side, Tensor& data) {
  const FiaSide s = fia_side(p, side);
  const std::vector<int64_t> table = p.paged() ? fia_block_table(p, a.seed()) : std::vector<int64_t>{};
  const FiaOriginals x(p, a, side);
  const Shape sshape = p.antiquant_shape(s.mode, s.dim);
  const DType sdt = p.antiquant_dtype(s.mode);
  const size_t groups = shape_numel(sshape);
  // The scale group of a row's channel d is s.group(group(row), d) (FiaSide): per channel,
  // group(row) + d, so a row's groups are a span.
  const bool own_groups = s.step == 1 && s.group_shift == 0;
  const auto group = [&](int64_t b, int64_t t, int64_t hk, int64_t blk, int64_t r) {
    return p.antiquant_index(s.mode, s.dim, b, p.kv_start[b] + t, hk, 0, blk, r);
  };
  // 1. Each scale's range over the elements it serves, found from the draws' random bits
  // (their least and greatest, whose values are the least and greatest values: see
  // FiaOriginals), so that no value is made in this pass. One span of the keys per
  // thread, each with its own ranges, then merged (min and max: the order is immaterial).
  // A group no element uses keeps lo > hi.
  struct Range {
    std::vector<uint64_t> lo, hi;
  };
  const int64_t keys = fia_total_keys(p),
                spans = std::max<int64_t>(1, std::min<int64_t>(a.threads(), keys / 1024));
  std::vector<Range> ranges(static_cast<size_t>(spans));
  parallel_for(spans, a.threads(), [&](int64_t i) {
    Range& g = ranges[static_cast<size_t>(i)];
    g.lo.assign(groups, std::numeric_limits<uint64_t>::max());
    g.hi.assign(groups, 0);
    uint64_t *lo = g.lo.data(), *hi = g.hi.data();
    std::vector<uint64_t> bits(static_cast<size_t>(s.dim));
    fia_for_each_row(p, table, s.dim, keys * i / spans, keys * (i + 1) / spans,
                     [&](int64_t b, int64_t t, int64_t hk, int64_t e, int64_t blk, int64_t r) {
                       const int64_t k0 = group(b, t, hk, blk, r);
                       draw_bits(x, e, s.dim, bits.data());
                       if (own_groups) return widen_ranges(bits.data(), s.dim, lo + k0, hi + k0);
                       for (int64_t d = 0; d < s.dim; ++d) {
                         const uint64_t w = bits[static_cast<size_t>(d)];
                         const int64_t k = s.group(k0, d);
                         lo[k] = std::min(lo[k], w);
                         hi[k] = std::max(hi[k], w);
                       }
                     });
  });
  for (size_t b = 1; b < ranges.size(); ++b)
    for (size_t k = 0; k < groups; ++k) {
      ranges[0].lo[k] = std::min(ranges[0].lo[k], ranges[b].lo[k]);
      ranges[0].hi[k] = std::max(ranges[0].hi[k], ranges[b].hi[k]);
    }
  // The values' range, with 0 inside it (the quantizer's ranges always include 0).
  std::vector<double> lo(groups, 0.0), hi(groups, 0.0);
  std::vector<uint8_t> used(groups, 0);
  for (size_t k = 0; k < groups; ++k) {
    if (ranges[0].lo[k] > ranges[0].hi[k]) continue;
    used[k] = 1;
    for (const uint64_t w : {ranges[0].lo[k], ranges[0].hi[k]}) {
      lo[k] = std::min(lo[k], x.value_of(w));
      hi[k] = std::max(hi[k], x.value_of(w));
    }
  }
  ranges.clear();
  // FP4 codes (per-token-group) take a power-of-two E8M0 scale, the OCP MX rule (spec); FP8
  // codes max|x| / 448 (the engines' rule, specs/quantize-group.md). Both are float codes:
  // x / scale, rounded to the code when stored (FP8 saturating).
  // HiF8 codes max|x| / 15: 15 = 1.875 * 2^3 is its largest value with three mantissa bits
  // (HiF8 tapers: |E| <= 3 keeps 3, so the top of the range keeps E4M3's precision; spec).
  const bool fp4 = p.quant.fp4(), fp8 = p.quant.fp8(), hif8 = p.quant.hif8(),
             float_codes = fp4 || fp8 || hif8;
  const double qmin = float_codes ? 0.0 : static_cast<double>(dtype_int_min(p.quant.codes)),
               qmax = float_codes ? 0.0 : static_cast<double>(dtype_int_max(p.quant.codes));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (data.dtype() != p.quant.codes || data.shape() != p.kv_shape(s.dim))
    throw std::logic_error("fia_quantized: " + s.data + " is not a " +
                           std::string(dtype_name(p.quant.codes)) + " tensor of K/V's shape");
  Tensor scale(s.scale, sdt, sshape, Role::input), offset(s.offset, sdt, sshape, Role::input);
  std::vector<double> sc(groups, nan), off(groups, nan);
  for (size_t g = 0; g < groups; ++g) {
    // A scale no element uses is NaN: a kernel that applies it fails.
    if (!used[g]) continue;
    if (fp4) {  // 2^(floor(log2 amax) - emax), emax 2 (E2M1's 6 = 1.5 * 2^2) or 0 (E1M2's 1.75)
      const double amax = std::max(hi[g], -lo[g]);
      int e = 0;
      std::frexp(std::max(amax, 0x1p-100), &e);  // amax in [2^(e-1), 2^e)
      sc[g] = std::ldexp(1.0, e - 1 - (p.quant.codes == DType::f4e2m1 ? 2 : 0));
      off[g] = 0;
    } else if (fp8) {
      sc[g] = std::max(round_to(sdt, std::max(hi[g], -lo[g]) / fp8_max(Fp8::e4m3fn)), round_to(sdt, 1e-4));
      off[g] = 0;
    } else if (hif8) {
      sc[g] = std::max(round_to(sdt, std::max(hi[g], -lo[g]) / kFiaHif8Divisor), round_to(sdt, 1e-4));
      off[g] = 0;
    } else if (p.quant.offset) {  // x ~ (code + offset) * scale, codes spanning [qmin, qmax]
      sc[g] = std::max(round_to(sdt, (hi[g] - lo[g]) / (qmax - qmin)), round_to(sdt, 1e-4));
      off[g] = round_to(sdt, std::nearbyint(lo[g] / sc[g]) - qmin);
    } else {
      sc[g] = std::max(round_to(sdt, std::max(hi[g], -lo[g]) / qmax), round_to(sdt, 1e-4));
      off[g] = 0;
    }
  }
  // antiquant_scale_spread: the codes stay those of the draws, the stored scale is f times
  // theirs, so the channel dequantizes to f times its draw.
  const std::vector<double>& f = x.channel_factors();
  std::vector<double> stored(sc);
  for (size_t g = 0; g < groups && !f.empty(); ++g) stored[g] = round_to(sdt, sc[g] * f[g]);
  scale.set_range(0, groups, stored.data());
  if (p.quant.offset) offset.set_range(0, groups, off.data());
  // 2. The codes: every token row written by one task (rows of an even dim fill whole
  // bytes of packed int4, so tasks never share a byte).
  const unsigned threads = s.dim % 2 == 0 ? a.threads() : 1;
  constexpr int64_t kChunk = 1024;  // key tokens per task
  int8_t* const int8 = data.dtype() == DType::i8 ? reinterpret_cast<int8_t*>(data.bytes().data()) : nullptr;
  uint8_t* const fp8_bytes = fp8 ? data.bytes().data() : nullptr;
  uint8_t* const hif8_bytes = hif8 ? data.bytes().data() : nullptr;
  parallel_for((keys + kChunk - 1) / kChunk, threads, [&](int64_t c) {
    const auto dim = static_cast<size_t>(s.dim);
    std::vector<double> codes(dim), row_scale(dim), row_offset(dim);
    fia_for_each_row(
        p, table, s.dim, c * kChunk, std::min(keys, (c + 1) * kChunk),
        [&](int64_t b, int64_t t, int64_t hk, int64_t e, int64_t blk, int64_t r) {
          const int64_t g0 = group(b, t, hk, blk, r);
          for (size_t d = 0; d < dim && !own_groups; ++d) {
            const auto g = static_cast<size_t>(s.group(g0, static_cast<int64_t>(d)));
            row_scale[d] = sc[g];
            row_offset[d] = off[g];
          }
          code_row(x, e, s.dim, own_groups ? &sc[static_cast<size_t>(g0)] : row_scale.data(),
                   own_groups ? &off[static_cast<size_t>(g0)] : row_offset.data(), float_codes, qmin, qmax,
                   codes.data());
          if (int8) {  // the common case, stored directly: the codes are integers in [qmin, qmax]
            for (int64_t d = 0; d < s.dim; ++d)
              int8[e + d] = static_cast<int8_t>(codes[static_cast<size_t>(d)]);
          } else if (fp8_bytes) {
            store_e4m3fn_row(codes.data(), s.dim, fp8_bytes + e);
          } else if (hif8_bytes) {
            fia_store_hif8_row(codes.data(), s.dim, hif8_bytes + e);
          } else {
            data.set_range(static_cast<size_t>(e), static_cast<size_t>(s.dim), codes.data());
          }
        });
  });
  TensorSet ts;
  ts.tensors.push_back(std::move(scale));
  if (p.quant.offset) ts.tensors.push_back(std::move(offset));
  return ts;
}

Tensor take_fia_quantized(const FiaParams& p, const Args& a, FiaQuantized& quantized, int side,
                          const std::string& name) {
  std::optional<TensorSet>& q = quantized[static_cast<size_t>(side)];
  if (!q || !q->has(name)) {
    const FiaSide s = fia_side(p, side);
    Tensor codes(s.data, p.quant.codes, p.kv_shape(s.dim), Role::input);
    q = fia_quantized(p, a, side, codes);
  }
  auto it =
      std::find_if(q->tensors.begin(), q->tensors.end(), [&](const Tensor& x) { return x.name() == name; });
  Tensor t = std::move(*it);
  q->tensors.erase(it);
  if (q->tensors.empty()) q.reset();
  return t;
}

}  // namespace kvbench
