#pragma once
// What the reference says one output tensor must hold.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "check/tolerance.hpp"
#include "core/tensor.hpp"

namespace kvbench {

// Whether two doubles have the same bits (NaN payloads and the sign of zero included).
bool same_bits(double a, double b);

// A stored bf16 bound widened to f32 (exact), and the bf16 at or above a bound >= 0 (0 and +inf
// stay; a value past bf16's largest finite, 3.39e38, becomes +inf): golden format 5's bounds.
inline float bf16_widened(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
inline uint16_t bf16_at_or_above(float x) {
  if (std::isnan(x)) return 0x7FC0;  // stays NaN (a carry could not turn it into a number)
  const uint32_t b = std::bit_cast<uint32_t>(x);
  // Positive: up in magnitude is up (negatives are refused by set_bound_bf16).
  return static_cast<uint16_t>((b >> 16) + ((b & 0xFFFFu) != 0 ? 1u : 0u));
}

// Extra figures reported for a case (label, value), e.g. a compression ratio.
using CaseFigures = std::vector<std::pair<std::string, std::string>>;

// An element an in-place operator writes: its flat index and its expected_f64.
struct WrittenElement {
  uint64_t index;
  double exact;
};

// A second value accepted for an element because its golden's pre-rounding value lies
// within the spec's epsilon of a rounding boundary (an int code one step away, or the
// dequantized value of that code). Counted apart.
struct Alternate {
  uint64_t index;
  double value;
};

// The golden of one output, held at the golden file's own size: the values in the
// output's dtype, never a double per element of a cache. An in-place output (a KV cache)
// is its whole tensor after the operator plus, for the elements the operator writes only,
// their index and expected_f64; every other element keeps its initial bits
// (specs/golden-format.md "Cost at model scale").
class Expected {
 public:
  static constexpr double none = std::numeric_limits<double>::quiet_NaN();

  Expected() = default;
  // A plain output of the name, dtype and shape of `like` (its data is not read): every
  // element 0 until set_row, expected_f64 equal to the value until set_row says otherwise.
  static Expected output(const Tensor& like);
  // A plain output holding `values` (each exactly representable in the dtype: a code, or a
  // float already rounded to it), with `exact` their expected_f64.
  static Expected output(const Tensor& like, const std::vector<double>& values, std::vector<double> exact);
  // A plain float output whose values are `exact` rounded to its dtype (nearest even).
  static Expected rounded(const Tensor& like, std::vector<double> exact);
  // An in-place output before the operator writes: its initial contents, nothing written.
  static Expected unchanged(const Tensor& initial);
  // An output as a golden file holds it: a plain one's values and exact values (same
  // count, or none: equal); an in-place one's tensor after the operator and the elements
  // written (ascending).
  static Expected plain(Tensor value, std::vector<double> exact);
  static Expected in_place(Tensor after, std::vector<WrittenElement> written);

  std::string tensor;
  Tolerance tolerance;
  // The spec's tolerance where it depends on the data (FIA's full int8 bound), set by the
  // reference that computes it; otherwise the operator's default_tolerance applies.
  std::optional<Tolerance> data_tolerance;
  // What the reference measured about this output besides its values, for the report
  // (FIA's and SDPA's quant_err: the output against the attention on unquantized K/V).
  CaseFigures figures;

  // The golden value of every element in the output's dtype and shape; for an in-place
  // output the whole tensor after the operator. `exact` is the same quantity before the
  // final conversion to that dtype: every intermediate rounding the definition makes is
  // included, only the last rounding (to the float dtype, or to an integer code and its
  // clamp) is not (specs/golden-format.md "expected_f64").
  const Tensor& value() const { return value_; }
  // Plain outputs: the exact value of every element, or empty where it equals value() bit
  // for bit everywhere (widen value() to get it). In-place outputs: see written().
  const std::vector<double>& exact() const { return exact_; }
  bool is_in_place() const { return in_place_; }

  // Plain outputs: elements [begin, begin + n) get `values` (representable in the dtype)
  // and their exact values, kept apart from the values only once one of them differs.
  void set_row(size_t begin, size_t n, const double* values, const double* exact);
  // In-place outputs: the operator writes element i (each at most once, in any order
  // until finish()).
  void write(size_t i, double value, double exact);
  void write_row(size_t begin, size_t n, const double* values, const double* exact);
  // Room for n more written elements (a reference that knows how many it will write).
  void reserve_writes(size_t n) { written_.reserve(written_.size() + n); }
  // Records the (non-NaN) alternate of element i, in any order until finish().
  void set_alternate(size_t i, double v);
  // Sorts what was recorded out of order; an element written, or given an alternate,
  // twice is a bug in the reference (std::logic_error). The readers below require it.
  void finish();

  // In-place outputs: the elements the operator writes, ascending (empty for plain ones).
  std::span<const WrittenElement> written() const;
  // Whether the operator writes element i (every element of a plain output).
  bool is_touched(size_t i) const;
  // The alternates, ascending by index; those of the elements [begin, end).
  std::span<const Alternate> alternates() const;
  std::span<const Alternate> alternates_in(size_t begin, size_t end) const;
  // Element i's alternate, or `none`.
  double alternate_at(size_t i) const;
  bool has_alternate(size_t i) const { return !alternates_in(i, i + 1).empty(); }

  // The per-element bound (specs/comparison.md "Bounds from the definition"): how far any
  // implementation the operator's definition permits may land from the golden, the output's
  // own rounding included, for every element of a plain float output; when it is set it
  // replaces atol + rtol * |golden| (a case file's tolerance replaces it again). Empty: none.
  // F32 values (golden format 4 as read), or BF16 bits (format 5, what kvbench writes: the
  // bound rounded up to bf16, ops/attention/attention_golden.hpp).
  void set_bound(std::vector<float> bound);
  void set_bound_bf16(std::vector<uint16_t> bits);
  bool has_bound() const { return !bound_.empty() || !bound_bf16_.empty(); }
  bool bound_is_bf16() const { return !bound_bf16_.empty(); }
  size_t bound_size() const { return bound_is_bf16() ? bound_bf16_.size() : bound_.size(); }
  float bound_at(size_t i) const { return bound_is_bf16() ? bf16_widened(bound_bf16_[i]) : bound_[i]; }
  // The stored bytes (F32 or BF16, little-endian as in memory), for the golden file.
  std::span<const uint8_t> bound_bytes() const;
  // The allowance of element i: its bound, or atol + rtol * |golden|.
  double allowed(size_t i, double golden) const {
    return has_bound() && !tolerance_override ? bound_at(i)
                                              : tolerance.atol + tolerance.rtol * std::fabs(golden);
  }
  // Whether the case file's tolerance replaces the bound.
  bool tolerance_override = false;
  // Elements where a permitted implementation gives NaN though the golden is finite (IEEE
  // 0 * inf at a key of weight 0 inside the sequence: specs/golden-format.md "a key of
  // weight 0"), in any order until finish(); ascending after it.
  void permit_nan(size_t i);
  std::span<const uint64_t> nan_permitted() const;
  bool is_nan_permitted(size_t i) const;

  // Frees the written elements, alternates and NaN permissions, and the exact values (once
  // a golden file holds them; value() and the bound stay).
  void release_records();
  void release_exact();

 private:
  void require_finished() const;
  Tensor value_;
  std::vector<double> exact_;
  bool in_place_ = false;
  std::vector<WrittenElement> written_;
  std::vector<Alternate> alternates_;
  std::vector<float> bound_;
  std::vector<uint16_t> bound_bf16_;
  std::vector<uint64_t> nan_permitted_;
  bool finished_ = true;
};

// Why a golden with per-element bounds accepts any output, or nullopt: a nonempty output none
// of whose elements can fail (each has a finite golden with an infinite bound, or a NaN
// permission). Such a case is not a test (inputs that overflow the definition: a scale of
// inf); the reference refuses it (OpCase::golden).
std::optional<std::string> accepts_any_output(const Expected& e);

// The goldens of a reference, moved into a vector (a braced list would copy them whole:
// the elements of an initializer_list are const).
template <typename... E>
std::vector<Expected> expected_list(E&&... e) {
  std::vector<Expected> v;
  v.reserve(sizeof...(e));
  (v.push_back(std::move(e)), ...);
  return v;
}

}  // namespace kvbench
