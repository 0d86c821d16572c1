#pragma once
// aclnn.FusedInferAttentionScoreV3: the quantized K/V of KV antiquant cases, made from
// values drawn in the tensor's range (spec "Inputs").
#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ops/fused_infer_attention/fia_params.hpp"
#include "core/rng.hpp"
#include "ops/operator.hpp"
#include "ref/quant.hpp"

namespace kvbench {

// The tensor names, head size and antiquant mode of K (side 0) or V (side 1).
struct FiaSide {
  std::string data, scale, offset;
  int64_t dim = 0;
  int mode = 0;
  int64_t base = 0;  // first element of the side's scales in the (combined) scale tensor
  // The scale group of a row's channel d is group(antiquant_index(.., d = 0, ..), d): only
  // per-channel scales (mode 0, not per-tensor; one per channel) and per-token-group ones
  // (mode 6; one per 32 channels) change along a row. A shift, not a division: group() runs
  // once per element of K/V (an integer division there cost about a third of the golden
  // of an int8 32k decode).
  int64_t step = 0;
  int group_shift = 0;  // log2 of the channels per group
  int64_t group(int64_t g0, int64_t d) const { return g0 + step * (d >> group_shift); }
};
FiaSide fia_side(const FiaParams& p, int side);

// Calls row(b, t, hk, e, blk, r) for every key token t (0-based in its batch) a batch
// reads, per kv head: e is the token row's first element in K/V (its dim elements follow
// contiguously), blk/r its page-attention block and slot (0 without page attention).
// Only the tokens [f0, f1) of all batches' tokens in order (fia_total_keys of them), so
// that callers can split the work.
int64_t fia_total_keys(const FiaParams& p);
template <typename Row>
void fia_for_each_row(const FiaParams& p, const std::vector<int64_t>& table, int64_t dim, int64_t f0,
                      int64_t f1, Row&& row) {
  int64_t first = 0;  // the flat index of batch b's token 0
  for (int64_t b = 0; b < p.B && first < f1; first += p.s2b[b], ++b)
    for (int64_t t = std::max<int64_t>(0, f0 - first); t < p.s2b[b] && first + t < f1; ++t) {
      const int64_t blk = p.paged() ? table[b * p.max_blocks + t / p.block_size] : 0,
                    r = p.paged() ? t % p.block_size : 0;
      for (int64_t hk = 0; hk < p.Nkv; ++hk) row(b, t, hk, fia_kv_index(p, table, b, t, hk, 0, dim), blk, r);
    }
}

// The generated attenMask's element k, 1 = masked: 1 outside the band (mode 0), else 1 with
// probability 1/4 except at each row's first visible column; masked_rows rows all 1; the
// compressed mask triu(ones(2048, 2048), 1) (spec "Inputs"). Reads p while called.
std::function<double(size_t)> fia_mask_values(const FiaParams& p, uint64_t seed);
// NaN in every page-attention cache row (K: dim D, V: Dv) no batch reads: the spare block
// and block tails (spec Decisions, "Page attention poisons what must not be read").
void fia_poison_cache(const FiaParams& p, uint64_t seed, Tensor& t, int64_t dim);

// The unquantized K or V (side) of an antiquant case, element by element: the query
// dtype's rounding of a uniform draw keyed by the element of K/V. Made on demand, never
// stored whole: the quantizer and quant_err's attention each draw what they need.
class FiaOriginals {
 public:
  FiaOriginals(const FiaParams& p, const Args& a, int side);
  double operator()(int64_t element) const { return value_of(bits(element)); }
  // The element's random bits, and the element made of them: value_of() never decreases
  // with the bits (CounterRng::uniform_of, then a rounding), so a group's least and
  // greatest elements are those of its least and greatest bits.
  uint64_t bits(int64_t element) const { return rng_.bits53(static_cast<uint64_t>(element)); }
  double value_of(uint64_t bits) const { return round_to(dtype_, CounterRng::uniform_of(bits, lo_, hi_)); }
  // Elements [first, first + n) into out (the dtype dispatched once, not per element).
  // With antiquant_scale_spread on a per-channel side: the factor f of scale group g = hk *
  // dim + d by which the quantized channel stands for f times its draw (its stored scale
  // f times the codes' scale; fia_quantized), else empty.
  const std::vector<double>& channel_factors() const { return factors_; }
  // Always inlined: its callers' AVX2 clones (code_row) vectorize the draws.
  [[gnu::always_inline]] void fill(int64_t first, int64_t n, double* out) const {
    switch (dtype_) {
      case DType::f16: return fill_rounded(first, n, out, [](double v) { return round_f16(v); });
      case DType::bf16: return fill_rounded(first, n, out, [](double v) { return round_bf16(v); });
      default: return fill_rounded(first, n, out, [this](double v) { return round_to(dtype_, v); });
    }
  }

 private:
  template <typename Round>
  void fill_rounded(int64_t first, int64_t n, double* out, Round round) const {
    for (int64_t i = 0; i < n; ++i) out[i] = round(CounterRng::uniform_of(bits(first + i), lo_, hi_));
  }
  CounterRng rng_;
  double lo_, hi_;
  DType dtype_;
  std::vector<double> factors_;
};

// One side quantized from its originals per scale group: symmetric scale = max|x| / qmax,
// or asymmetric over [min, max] with an integer offset, both in the scale's dtype. The
// codes go into `data` (K or V, allocated: the caller's tensor, so that the codes are
// never held twice); returned are the scale and (with antiquant_offset) the offset, named
// as the separate parameters (keyAntiquantScale, ...) or, combined,
// antiquantScale/antiquantOffset holding this side's half only.
TensorSet fia_quantized(const FiaParams& p, const Args& a, int side, Tensor& data);
// codes[d] = hif8_encode(values[d], Hif8Overflow::saturate) for d < dim, bit for bit: the
// store of generated HiF8 K/V codes.
void fia_store_hif8_row(const double* values, int64_t dim, uint8_t* codes);

// K's and V's scales (and offsets) as fia_quantized made them with their codes, kept until
// taken while one case's tensors are filled.
using FiaQuantized = std::array<std::optional<TensorSet>, 2>;
// One of a side's scale/offset tensors, handed out once: normally kept in `quantized` from
// quantizing its K/V (which come before their scales); otherwise the side is quantized
// again, its codes dropped.
Tensor take_fia_quantized(const FiaParams& p, const Args& a, FiaQuantized& quantized, int side,
                          const std::string& name);

}  // namespace kvbench
