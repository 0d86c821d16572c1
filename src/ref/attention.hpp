#pragma once
// The double-precision attention reference every attention operator uses (MHCA, SDPA and
// FIA): many query rows against the same key/value rows, blocked and multi-threaded.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "ref/attention_bound.hpp"
#include "ref/attention_variants.hpp"

namespace kvbench {

// ALiBi slopes for n heads (BLOOM's rule, PMX ALiBiSlope; ggml's with its max_bias, 8 in
// BLOOM): with c = 2^floor(log2 n), slope_k = 2^(-max_bias k/c) for k = 1..c, then
// 2^(-max_bias/2 k/c) for odd k = 1, 3, ..., 2(n-c)-1.
std::vector<double> alibi_slopes(int64_t n, double max_bias = 8);

// Rows of a K or V matrix held as doubles: row t starts at data + t * stride.
struct RowsView {
  const double* data = nullptr;
  int64_t stride = 0;
  const double* row(int64_t t) const { return data + t * stride; }
};

// K or V rows made on demand (dequantized, generated, gathered from a paged cache): fill
// writes element d of row t to dst[d * step]. Called from several threads at once for
// different rows, so it must only read shared state.
using RowSource = std::function<void(int64_t t, double* dst, int64_t step)>;

// What a row whose every score is -inf (nothing to attend to) produces.
enum class EmptyRow {
  nan,    // torch.softmax: NaN probabilities, so a NaN output (PMX)
  zeros,  // zeros and log-sum-exp +inf (oneDNN's inf_as_zero, Ascend's innerPrecise row fix)
};

// A kernel fault planted in attend() (ops/fault.hpp with_attention_faults; `kvbench
// coverage --faults`): none for every golden.
enum class AttentionFault {
  none,
  no_max_subtraction,  // p = f32(exp(s)), no max subtracted: inf past s = 88.72, then NaN
  sum_f16,             // the softmax sum accumulated in f16
  pv_f16,              // each partial sum of P.V rounded to f16
  // Tile faults on a row's keys [begin, end), in tiles of kFaultTile keys from begin:
  tile_padding_counted,        // the last tile's padding lanes (K = 0, V = 0) in the max and sum
  key_past_full_tile_dropped,  // a row of k * tile + 1 keys (k >= 1) loses its last key
  // q . k in chunks of 32 lanes: when dk % 32 != 0 (dk > 32) the last chunk's idle lanes
  // keep the previous chunk's products, adding q[d - 32] k[d - 32] for d in [dk, round_up).
  head_dim_tail_stale,
};
// The tile of the tile faults: the key tile most GPU attention kernels use.
inline constexpr int64_t kFaultTile = 64;
// The attention fault of a fault name (none for any other name).
AttentionFault attention_fault(const std::string& name);

// The output elements, by flat index, where a permitted implementation may give NaN (IEEE
// 0 * inf: a key of the call the row weighs 0 has a non-finite V). Few or none, so a list,
// not a byte per element (32 MB on Llama-3-8B's 8k prefill). add() may be called from the
// reference's threads at once.
class NanPermits {
 public:
  void add(int64_t index);
  // Ascending, each index once.
  std::vector<int64_t> sorted() const;

 private:
  std::vector<int64_t> list_;
};

// One query row: its query vector, the keys it sees, where its output goes.
struct QueryRow {
  const double* q = nullptr;   // dk values
  int64_t begin = 0, end = 0;  // it sees keys [begin, end); every other key scores -inf and is
                               // not computed at all (bit-identical: it would add exp(-inf) = +0)
  double* out = nullptr;       // dv values
  // With AttentionBlock::permitted: bound, dv values: how far a permitted implementation's
  // output may lie from out (before the output's rounding), the bf16 at or above the f32 at
  // or above it, as bits (golden format 5's BF16 bound); nan_ok: where one may give NaN, out[c]
  // being output element out_index + c.
  uint16_t* bound = nullptr;
  NanPermits* nan_ok = nullptr;
  int64_t out_index = 0;
  // An attention sink (gpt-oss; ggml's flash_attn_ext_add_sinks): one more score in the
  // softmax's max and sum that has no value row. -inf: none.
  double sink = -std::numeric_limits<double>::infinity();
  // For the bound: how far a permitted implementation's query may lie from q, as the 2-norm
  // of the per-element differences (ggml's CPU kernel converts q to K's vec-dot type: q8_0
  // blocks, f16, bf16), plus any other difference of q . k per unit of ||k||.
  double q_delta = 0;
};

// What the query rows of one attend() call share: they attend over the same K and V.
struct AttentionBlock {
  int64_t dk = 0, dv = 0;
  double scale = 1;  // s = (q . k) * scale, or (q . k) / scale
  bool divide_by_scale = false;
  // Applied in place to row r's scaled scores s[0, end - begin) of keys [begin, end):
  // masks, ALiBi, pse (-inf removes a key). Called from several threads at once for
  // different rows: it must only read shared state. Empty: no bias.
  // Returns how far a permitted implementation's bias (softcap, ALiBi slope times the mask)
  // may move the row's final scores, absolutely, beyond PermittedDeltas::s (for the bound).
  std::function<double(int64_t r, int64_t begin, int64_t end, double* s)> bias;
  std::optional<DType> round_p;  // P rounded to this dtype before P @ V (PMX, SDPA)
  // Applied to each unnormalized exp(s - max) (in (0, 1]) before P @ V, whose result is
  // then divided by the sum of the unquantized values (FIA's full int8: P as int8 codes).
  std::function<double(double)> quantize_p;
  // When set: row r's largest score at row_max[r] (-inf for a row that sees no key).
  double* row_max = nullptr;
  EmptyRow empty = EmptyRow::zeros;
  AttentionFault fault = AttentionFault::none;
  // When set, attend() also writes each row's bound and NaN permissions (QueryRow::bound,
  // nan_ok) and, where lse_bound is given, lse_bound[r]: how far any implementation the
  // operator permits may land from this golden (ref/attention_bound.hpp).
  std::optional<PermittedDeltas> permitted;
  double* lse_bound = nullptr;
  // When set: the rows computed as this permitted implementation would, in f32
  // (ref/attention_variants.hpp; `kvbench coverage --variants`), not as the golden.
  const PrecisionSteps* steps = nullptr;
  // Threads the call may use (the case's reference threads): the bytes do not depend on it.
  unsigned threads = 1;
};

// For every row r: rows[r].out[0, dv) = softmax(scores) @ V and, when lse is not null,
// lse[r] = the log-sum-exp of the final scores (max + log(sum exp(s - max))), +inf for a
// row that sees no key or whose every score is -inf. exp and log are det_exp and det_log
// (ref/det_math.hpp), whose bits do not depend on the machine.
//
// Each output element has one fixed evaluation order, whatever the tiling, vector width
// or thread count: q . k sums q[d] * k[d] over ascending d starting from 0; the softmax
// takes the max, exp(s - max) and their sum over ascending keys, then divides (and rounds
// to round_p); out[d] sums p[t] * v[t][d] over ascending t starting from 0; every
// product is rounded before its addition (no FMA). The work is split over
// a.threads threads by blocks of rows, each output written by one task, so the
// bytes do not depend on the thread count (tests/test_attention_ref.cpp). Memory beyond
// the inputs: K transposed and V copied in strips once, and a score tile of 32 rows (by
// the keys they see) per thread.
void attend(const AttentionBlock& a, std::span<const QueryRow> rows, RowsView k, RowsView v, double* lse);
// The same with K and V rows taken from sources, written straight into the transposed
// panels and strips attend() works on: no whole K or V matrix of doubles beside them.
// The rows are made on a.threads threads (the bytes do not depend on it).
void attend(const AttentionBlock& a, std::span<const QueryRow> rows, const RowSource& k, const RowSource& v,
            double* lse);

// attend() with AttentionBlock::steps set: every row in f32 with those precision steps.
void attend_variant(const AttentionBlock& a, std::span<const QueryRow> rows, const RowSource& k,
                    const RowSource& v, double* lse);

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
