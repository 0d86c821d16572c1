#pragma once
// One expanded case parsed against an operator's declared signature (ops/signature.hpp):
// Args checks every written key and tensor entry, resolves defaults, and gives the operator
// the resolved values and a CaseError at the JSON pointer of the key it blames.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cases/case_def.hpp"
#include "check/tolerance.hpp"
#include "core/dtype.hpp"
#include "core/run_options.hpp"
#include "inputs/file_inputs.hpp"
#include "ops/signature.hpp"

namespace kvbench {

// One expanded case parsed against a signature: every written key known and of its
// declared type and bounds, defaults resolved. Constructing it throws CaseError. It keeps
// the options it was parsed under (memory budget, input paths, reference threads) for
// everything the case does later.
class Args {
 public:
  Args(CaseDef def, const Signature& sig, const RunOptions& options);

  const CaseDef& def() const { return def_; }
  const Signature& signature() const { return *sig_; }
  uint64_t seed() const { return def_.seed; }
  const RunOptions& options() const { return options_; }
  unsigned threads() const { return options_.reference_threads; }
  // For a command that shares the cores among cases it learns the number of only once they
  // are instantiated (`golden --jobs`): the bytes do not depend on it.
  void set_threads(unsigned n) { options_.reference_threads = std::max(1u, n); }

  // Resolved values (written, else the declared fallback). A derived key the operator
  // has not resolved yet, or a key not in the signature, is a logic error.
  int64_t integer(const std::string& key) const;
  bool boolean(const std::string& key) const;
  double number(const std::string& key) const;
  std::string string(const std::string& key) const;
  std::vector<int64_t> integers(const std::string& key) const;
  bool written(const std::string& key) const;
  // Records the value of a derived key (shown with the resolved attributes).
  void resolve(const std::string& key, nlohmann::json value);
  // For an operator that allocates while it is instantiated (a page table, a slot
  // shuffle): CaseError at `key` when `count` elements of `bytes_each` would not fit the
  // memory budget, or their product overflows. Returns the product.
  uint64_t require_memory(const std::string& key, std::initializer_list<int64_t> count, uint64_t bytes_each,
                          const std::string& what) const;

  // For an operator that builds lists of a size its numbers give (FIA's per-batch lengths)
  // before its tensors can be checked: the memory the case will need at least, a sum of
  // terms (each a product of sizes times bytes per element) computed with overflow checks.
  // Over the budget, or past 2^64, it is a CaseError at the key of the largest size, before
  // anything of that size exists.
  struct Size {
    std::string key;  // the case-file key that sets it (blamed when it is the largest)
    int64_t value;
  };
  struct MemoryTerm {
    std::vector<Size> sizes;
    uint64_t bytes_each;
  };
  void require_memory(const std::vector<MemoryTerm>& terms, const std::string& what) const;

  // A tensor's dtype: the case file's choice, else `fallback`. A choice outside `allowed`
  // (when given, narrower than the declared choices in this case) is a CaseError.
  DType dtype(const std::string& tensor, DType fallback, std::initializer_list<DType> allowed = {}) const;
  // A written dtype must equal `like` (e.g. current_value follows current_key).
  void require_same_dtype(const std::string& tensor, DType like, const std::string& like_name) const;
  // The generator range of a float input: the case's `ranges` entry, else the declared one.
  std::pair<double, double> range(const std::string& tensor) const;
  // The case's tolerance override for an output, else `fallback`.
  Tolerance tolerance(const std::string& output, const Tolerance& fallback) const;

  // CaseError at the key's pointer (its sweep entry when swept).
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  [[noreturn]] void fail_at(const std::string& key, size_t index, const std::string& message) const;

  // attributes/shapes/inputs as the case ran: written values, defaults and derived values.
  nlohmann::json resolved() const;
  // The inputs the case file takes from files, tensors and `inputs` parameters alike.
  const std::vector<FileSource>& file_sources() const { return files_; }
  const FileSource* file_source(const std::string& key) const;

 private:
  // The parts of the constructor's checks, in its order.
  const nlohmann::json* section(const char* name) const;  // the case file's object, or null
  void check_param_keys();
  nlohmann::json checked_value(const Param& p, const nlohmann::json& v) const;
  void check_dtypes() const;
  void check_ranges() const;
  void check_tolerances() const;
  const nlohmann::json& value(const std::string& key) const;
  // The values of an integer `inputs` parameter the case file takes from a file.
  nlohmann::json values_from_file(const Param& p, const nlohmann::json& value);
  std::string pointer(const std::string& key) const;

  CaseDef def_;
  const Signature* sig_;
  RunOptions options_;
  nlohmann::json values_ = nlohmann::json::object();  // key -> resolved value
  std::vector<FileSource> files_;
};

// The closest of `candidates` to `key` within a small edit distance, or "".
std::string closest_name(const std::string& key, const std::vector<std::string>& candidates);

}  // namespace kvbench
