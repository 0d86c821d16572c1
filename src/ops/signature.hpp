#pragma once
// An operator's declared signature: its case-file keys (attributes, shapes, inputs) and its
// tensors, each declared once. From it the generic path parses a case (Args, ops/args.hpp:
// unknown keys and wrongly typed values rejected with their JSON pointer), resolves
// defaults, accepts `dtypes`/`ranges`/`tolerance` only for tensors that take them, and
// prints the documentation (`kvbench ops`).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "core/tensor.hpp"
#include "ops/fault.hpp"

namespace kvbench {

enum class ParamType { integer, boolean, number, string, integers };
// The type's name in the documentation and in messages ("integer", "integers", ...).
const char* param_type_name(ParamType t);
// The sections of a case file that hold parameters, in the order the documentation lists them.
inline constexpr const char* kParamSections[] = {"attributes", "shapes", "inputs"};
// A number as messages and the documentation write it (a bound, a range's end).
std::string bound_text(double x);

// One key of `attributes`, `shapes` or `inputs`. Keys are unique across the three sections.
struct Param {
  std::string section;  // "attributes", "shapes" or "inputs"
  std::string name;
  ParamType type = ParamType::integer;
  // The value when the case file omits the key; null = required (unless `derived`).
  nlohmann::json fallback = nullptr;
  // Not null: omitted, the operator derives the value from others (this says how).
  std::string derived;
  std::vector<nlohmann::json> allowed;  // the only values taken (empty: any of the type)
  std::optional<double> min, max;       // bounds of a number, integer or each list element
  std::string doc;
};

// One tensor of the operator.
struct TensorDecl {
  std::string name;
  Role role = Role::input;
  std::string shape;  // e.g. "[B, S, H, D]", for the documentation
  // The dtypes a case file may choose under `dtypes` (empty: not chosen by the case file).
  std::vector<DType> choices;
  std::string dtype_rule;  // how the dtype is set, e.g. "f16 (default) or f32", "= query"
  // A generator range [low, high) a case file may override under `ranges`.
  std::optional<std::pair<double, double>> range;
  std::string present;  // empty: always present; else when it is (e.g. "quant_bit > 0")
  std::string doc;
  // May come as a list (FIA's tensorlist key/value): the case's tensors NAME.0, NAME.1, ...,
  // each declared by this entry (dtypes, ranges and tolerance name the list).
  bool list = false;
};

struct Signature {
  std::string id;
  std::string doc;
  std::vector<Param> params;
  std::vector<TensorDecl> tensors;
  // The tensors a case file may take from a file ("inputs": {NAME: {"file": ...}}), besides
  // the `inputs` keys, which always may (the file gives their values, checked as written
  // ones). The others the operator derives from its parameters or the seed (a block table,
  // prefix sums), so a file could contradict them.
  std::vector<std::string> from_files;
  // The keys that set sizes (batch, lengths, head counts, head sizes, page size), in the
  // order `kvbench shrink` reduces them.
  std::vector<std::string> sizes;
  // The kernel faults `kvbench coverage --faults` plants in this operator's reference.
  std::vector<Fault> faults;
  // The permitted implementations `kvbench coverage --variants` computes with its reference.
  std::vector<Variant> variants;

  const Param* param(const std::string& name) const;
  // The declaration of a tensor, a list element NAME.<index> included.
  const TensorDecl* tensor(const std::string& name) const;
  bool takes_file(const std::string& tensor) const;
  // Human-readable documentation of every key and tensor.
  std::string describe() const;
  nlohmann::json to_json() const;
};

}  // namespace kvbench
