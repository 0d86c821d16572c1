#include "check/expected.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace kvbench {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

namespace {

// Sorts records by index and refuses an index recorded twice. (The big writers record in
// ascending order, so that finish() has nothing to sort.)
template <typename Record>
void sort_unique(std::vector<Record>& v, const std::string& tensor, const char* what) {
  std::sort(v.begin(), v.end(), [](const Record& a, const Record& b) { return a.index < b.index; });
  const auto twice = std::adjacent_find(v.begin(), v.end(),
                                        [](const Record& a, const Record& b) { return a.index == b.index; });
  if (twice != v.end())
    throw std::logic_error("the reference " + std::string(what) + " element " + std::to_string(twice->index) +
                           " of " + tensor + " twice");
}

template <typename Record>
std::span<const Record> records_in(const std::vector<Record>& v, size_t begin, size_t end) {
  const auto before = [](const Record& r, uint64_t i) { return r.index < i; };
  const auto first = std::lower_bound(v.begin(), v.end(), uint64_t{begin}, before);
  const auto last = std::lower_bound(first, v.end(), uint64_t{end}, before);
  return {first, last};
}

// Appending keeps a record list sorted only while indices ascend.
template <typename Record>
bool ascends_after(const std::vector<Record>& v, size_t i) {
  return v.empty() || v.back().index < i;
}

}  // namespace

Expected Expected::output(const Tensor& like) {
  Expected e;
  e.tensor = like.name();
  e.value_ = Tensor(like.name(), like.dtype(), like.shape(), Role::output);
  return e;
}

Expected Expected::output(const Tensor& like, const std::vector<double>& values, std::vector<double> exact) {
  Expected e = output(like);
  if (values.size() != e.value_.numel() || exact.size() != values.size())
    throw std::logic_error("the reference's " + e.tensor + " does not have the tensor's element count");
  e.value_.set_range(0, values.size(), values.data());
  e.exact_ = std::move(exact);
  return e;
}

Expected Expected::rounded(const Tensor& like, std::vector<double> exact) {
  if (!dtype_is_float(like.dtype())) throw std::logic_error(like.name() + " is not a float output");
  Expected e = output(like);
  if (exact.size() != e.value_.numel())
    throw std::logic_error("the reference's " + e.tensor + " does not have the tensor's element count");
  // A double stored into a float tensor is rounded to nearest even (Tensor::set_range).
  e.value_.set_range(0, exact.size(), exact.data());
  e.exact_ = std::move(exact);
  return e;
}

Expected Expected::unchanged(const Tensor& initial) {
  Expected e;
  e.tensor = initial.name();
  e.value_ = initial;
  e.in_place_ = true;
  return e;
}

Expected Expected::plain(Tensor value, std::vector<double> exact) {
  if (!exact.empty() && exact.size() != value.numel())
    throw std::logic_error("the exact values of " + value.name() + " do not have the tensor's element count");
  Expected e;
  e.tensor = value.name();
  e.value_ = std::move(value);
  e.exact_ = std::move(exact);
  return e;
}

Expected Expected::in_place(Tensor after, std::vector<WrittenElement> written) {
  Expected e;
  e.tensor = after.name();
  e.value_ = std::move(after);
  e.in_place_ = true;
  e.written_ = std::move(written);
  e.finished_ = false;
  e.finish();
  return e;
}

void Expected::set_row(size_t begin, size_t n, const double* values, const double* exact) {
  if (in_place_) throw std::logic_error(tensor + " is in place: write_row, not set_row");
  value_.set_range(begin, n, values);
  if (exact_.empty()) {
    size_t k = 0;
    while (k < n && same_bits(exact[k], values[k])) ++k;
    if (k == n) return;
    // The first element whose expected_f64 is not its value: from here on it is kept apart
    // (the elements so far had it equal to their value).
    exact_ = value_.values();
  }
  std::copy(exact, exact + n, exact_.begin() + static_cast<std::ptrdiff_t>(begin));
}

void Expected::write(size_t i, double value, double exact) {
  if (!in_place_) throw std::logic_error(tensor + " is not in place: set_row, not write");
  value_.set(i, value);
  if (!ascends_after(written_, i)) finished_ = false;
  written_.push_back({i, exact});
}

void Expected::write_row(size_t begin, size_t n, const double* values, const double* exact) {
  if (!in_place_) throw std::logic_error(tensor + " is not in place: set_row, not write_row");
  if (n == 0) return;
  value_.set_range(begin, n, values);
  if (!ascends_after(written_, begin)) finished_ = false;
  for (size_t k = 0; k < n; ++k) written_.push_back({begin + k, exact[k]});
}

void Expected::set_alternate(size_t i, double v) {
  if (std::isnan(v)) return;
  if (!ascends_after(alternates_, i)) finished_ = false;
  alternates_.push_back({i, v});
}

void Expected::set_bound(std::vector<float> bound) {
  if (in_place_ || bound.size() != value_.numel())
    throw std::logic_error("the bound of " + tensor + " must hold one value per element of a plain output");
  for (size_t i = 0; i < bound.size(); ++i)
    if (!(bound[i] >= 0))  // NaN or negative: no golden may carry one (the reader refuses it too)
      throw std::logic_error("the bound of " + tensor + " holds " + std::to_string(bound[i]) +
                             " at flat index " + std::to_string(i) + " (a bound is a non-negative number)");
  bound_ = std::move(bound);
  bound_bf16_.clear();
}

void Expected::set_bound_bf16(std::vector<uint16_t> bits) {
  if (in_place_ || bits.size() != value_.numel())
    throw std::logic_error("the bound of " + tensor + " must hold one value per element of a plain output");
  for (size_t i = 0; i < bits.size(); ++i)
    if (!(bf16_widened(bits[i]) >= 0))  // NaN or negative, as set_bound
      throw std::logic_error("the bound of " + tensor + " holds " + std::to_string(bf16_widened(bits[i])) +
                             " at flat index " + std::to_string(i) + " (a bound is a non-negative number)");
  bound_bf16_ = std::move(bits);
  bound_.clear();
}

std::span<const uint8_t> Expected::bound_bytes() const {
  if (bound_is_bf16()) return {reinterpret_cast<const uint8_t*>(bound_bf16_.data()), bound_bf16_.size() * 2};
  return {reinterpret_cast<const uint8_t*>(bound_.data()), bound_.size() * 4};
}

void Expected::permit_nan(size_t i) {
  if (!nan_permitted_.empty() && nan_permitted_.back() >= i) finished_ = false;
  nan_permitted_.push_back(i);
}

std::span<const uint64_t> Expected::nan_permitted() const {
  require_finished();
  return nan_permitted_;
}

bool Expected::is_nan_permitted(size_t i) const {
  require_finished();
  return std::binary_search(nan_permitted_.begin(), nan_permitted_.end(), uint64_t{i});
}

void Expected::finish() {
  if (finished_) return;
  sort_unique(written_, tensor, "wrote");
  sort_unique(alternates_, tensor, "gave an alternate to");
  std::sort(nan_permitted_.begin(), nan_permitted_.end());
  nan_permitted_.erase(std::unique(nan_permitted_.begin(), nan_permitted_.end()), nan_permitted_.end());
  finished_ = true;
}

void Expected::require_finished() const {
  if (!finished_) throw std::logic_error("the golden of " + tensor + " is read before finish()");
}

std::span<const WrittenElement> Expected::written() const {
  require_finished();
  return written_;
}

bool Expected::is_touched(size_t i) const {
  require_finished();
  return !in_place_ || !records_in(written_, i, i + 1).empty();
}

std::span<const Alternate> Expected::alternates() const {
  require_finished();
  return alternates_;
}

std::span<const Alternate> Expected::alternates_in(size_t begin, size_t end) const {
  require_finished();
  return records_in(alternates_, begin, end);
}

double Expected::alternate_at(size_t i) const {
  const auto a = alternates_in(i, i + 1);
  return a.empty() ? none : a.front().value;
}

void Expected::release_records() {
  std::vector<WrittenElement>().swap(written_);
  std::vector<Alternate>().swap(alternates_);
  std::vector<uint64_t>().swap(nan_permitted_);
}

void Expected::release_exact() { std::vector<double>().swap(exact_); }

std::optional<std::string> accepts_any_output(const Expected& e) {
  if (!e.has_bound() || e.tolerance_override || e.value().numel() == 0) return std::nullopt;
  const std::vector<double>& exact = e.exact();
  size_t infinite = 0;
  for (size_t i = 0; i < e.bound_size(); ++i) {
    const double g = exact.empty() ? e.value().get(i) : exact[i];
    const float bound = e.bound_at(i);
    if (!std::isfinite(g) || (std::isfinite(bound) && !e.is_nan_permitted(i))) return std::nullopt;
    infinite += std::isinf(bound) ? 1 : 0;
  }
  return e.tensor + ": the golden accepts any output (" + std::to_string(infinite) + " of " +
         std::to_string(e.bound_size()) +
         " elements with an infinite bound, the others NaN-permitted): the " +
         "inputs overflow the definition (a scale or value of inf or near the dtype's maximum), so no " +
         "output could fail";
}

}  // namespace kvbench
