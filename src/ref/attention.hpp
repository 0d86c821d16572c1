#pragma once
// The double-precision attention reference every attention operator uses (MHCA, SDPA, and
// FIA next): one query row against kv_len key/value rows.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace kvbench {

// ALiBi slopes for n heads (BLOOM's rule, PMX ALiBiSlope): with c = 2^floor(log2 n),
// slope_k = 2^(-8k/c) for k = 1..c, then 2^(-4k/c) for odd k = 1, 3, ..., 2(n-c)-1.
std::vector<double> alibi_slopes(int64_t n);

// Rows of a K or V matrix held as doubles: row t starts at data + t * stride.
struct RowsView {
  const double* data = nullptr;
  int64_t stride = 0;
  const double* row(int64_t t) const { return data + t * stride; }
};

// What a row whose every score is -inf (nothing to attend to) produces.
enum class EmptyRow {
  nan,    // torch.softmax: NaN probabilities, so a NaN output (PMX)
  zeros,  // zeros and log-sum-exp +inf (oneDNN's inf_as_zero, Ascend's innerPrecise row fix)
};

struct AttentionRow {
  int64_t kv_len = 0, dk = 0, dv = 0;
  double scale = 1;              // s = (q . k) * scale, or (q . k) / scale
  bool divide_by_scale = false;
  // Applied to each scaled score: masks, causal limits, ALiBi, pse. Returns the final
  // score (-inf removes the key). Empty: no bias.
  std::function<double(int64_t t, double score)> bias;
  std::optional<DType> round_p;  // P rounded to this dtype before P @ V (PMX, SDPA)
  EmptyRow empty = EmptyRow::zeros;
};

// out[0, dv) = softmax(scores) @ V, summing over t in ascending order with a fixed
// evaluation order (bit-identical everywhere). Returns the log-sum-exp of the final scores
// (max + log(sum exp(s - max))), +inf for an empty row.
double attend_row(const AttentionRow& a, const double* q, RowsView k, RowsView v, double* out);

// The FLOPs attention counts for `pairs` visible (query row, key, head) triples: the
// multiply-adds of q.k over dk and of p.v over dv (what `kvbench bench` reports as GFLOPS).
inline double attention_flops(double pairs, int64_t dk, int64_t dv) {
  return 2.0 * pairs * static_cast<double>(dk + dv);
}

// The accuracy attribution of attention over quantized K/V ("quant_err"): the exact
// attention on the dequantized K/V against the exact attention on the unquantized K/V, as
// "max_abs X, rel_l2 Y".
std::string quant_error_text(const std::vector<double>& quantized, const std::vector<double>& unquantized);

}  // namespace kvbench
