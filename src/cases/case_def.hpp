#pragma once
// One expanded case, and typed access to its fields that reports errors by JSON pointer.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"

namespace kvbench {

struct Tolerance;

struct CaseDef {
  std::string file;  // the case file it came from
  std::string name;  // base name, plus [param=value,...] for swept parameters
  std::string op;
  uint64_t seed = 0;
  bool slow = false;    // kept out of the default run (`--slow include|only`)
  nlohmann::json body;  // the file's document with this expansion's sweep values filled in
  // For each swept field's pointer (e.g. /attributes/quant_bit), where its value sits in
  // the file (e.g. /sweep/quant_bit/2), so errors point at what the author wrote.
  std::map<std::string, std::string> swept_from;
  std::vector<std::pair<std::string, nlohmann::json>> params;  // the swept values, in order

  // The pointer to report for a field of the expanded case.
  std::string locate(const std::string& pointer) const;

  // Typed field access: section is "attributes", "shapes", "inputs" or "dtypes".
  // A missing field takes the default; with no default it is an error. A value of the
  // wrong type is an error naming the field.
  bool has(const std::string& section, const std::string& key) const;
  int64_t integer(const std::string& section, const std::string& key,
                  std::optional<int64_t> fallback = std::nullopt) const;
  bool boolean(const std::string& section, const std::string& key,
               std::optional<bool> fallback = std::nullopt) const;
  std::string string(const std::string& section, const std::string& key,
                     std::optional<std::string> fallback = std::nullopt) const;
  std::vector<int64_t> integers(const std::string& section, const std::string& key) const;
  DType dtype(const std::string& tensor, DType fallback, std::initializer_list<DType> allowed) const;
  // The generator range [low, high) of a float input, or the operator's default.
  std::pair<double, double> range(const std::string& tensor, std::pair<double, double> fallback) const;
  // The default tolerance, replaced by the case file's override for this output if any.
  Tolerance tolerance(const std::string& output, const Tolerance& fallback) const;

  // Throws CaseError for /section/key (or element `index` of that array) with the message.
  [[noreturn]] void fail(const std::string& section, const std::string& key,
                         const std::string& message) const;
  [[noreturn]] void fail_at(const std::string& section, const std::string& key, size_t index,
                            const std::string& message) const;

 private:
  const nlohmann::json* find(const std::string& section, const std::string& key) const;
};

}  // namespace kvbench
