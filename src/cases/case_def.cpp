#include "cases/case_def.hpp"

#include "cases/schema.hpp"
#include "check/tolerance.hpp"
#include "core/error.hpp"

namespace kvbench {

std::string CaseDef::locate(const std::string& pointer) const {
  auto it = swept_from.find(pointer);
  return it == swept_from.end() ? pointer : it->second;
}

void CaseDef::fail(const std::string& section, const std::string& key, const std::string& message) const {
  throw CaseError(locate("/" + section + "/" + pointer_token(key)), message);
}

void CaseDef::fail_at(const std::string& section, const std::string& key, size_t index,
                      const std::string& message) const {
  throw CaseError(locate("/" + section + "/" + pointer_token(key)) + "/" + std::to_string(index), message);
}

const nlohmann::json* CaseDef::find(const std::string& section, const std::string& key) const {
  if (!body.contains(section) || !body[section].contains(key)) return nullptr;
  return &body[section][key];
}

bool CaseDef::has(const std::string& section, const std::string& key) const {
  return find(section, key) != nullptr;
}

int64_t CaseDef::integer(const std::string& section, const std::string& key,
                         std::optional<int64_t> fallback) const {
  const auto* v = find(section, key);
  if (!v) {
    if (fallback) return *fallback;
    fail(section, key, key + " is required");
  }
  if (!v->is_number_integer()) fail(section, key, key + " must be an integer, got " + v->dump());
  return v->get<int64_t>();
}

bool CaseDef::boolean(const std::string& section, const std::string& key,
                      std::optional<bool> fallback) const {
  const auto* v = find(section, key);
  if (!v) {
    if (fallback) return *fallback;
    fail(section, key, key + " is required");
  }
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_number_integer() && (v->get<int64_t>() == 0 || v->get<int64_t>() == 1))
    return v->get<int64_t>() == 1;
  fail(section, key, key + " must be true/false (or 0/1), got " + v->dump());
}

std::string CaseDef::string(const std::string& section, const std::string& key,
                            std::optional<std::string> fallback) const {
  const auto* v = find(section, key);
  if (!v) {
    if (fallback) return *fallback;
    fail(section, key, key + " is required");
  }
  if (!v->is_string()) fail(section, key, key + " must be a string, got " + v->dump());
  return v->get<std::string>();
}

std::vector<int64_t> CaseDef::integers(const std::string& section, const std::string& key) const {
  const auto* v = find(section, key);
  if (!v) fail(section, key, key + " is required");
  if (v->is_number_integer()) return {v->get<int64_t>()};
  std::vector<int64_t> out;
  if (v->is_array())
    for (const auto& x : *v) {
      if (!x.is_number_integer()) fail(section, key, key + " must hold integers, got " + x.dump());
      out.push_back(x.get<int64_t>());
    }
  else
    fail(section, key, key + " must be an integer or an array of integers");
  return out;
}

DType CaseDef::dtype(const std::string& tensor, DType fallback, std::initializer_list<DType> allowed) const {
  const auto* v = find("dtypes", tensor);
  DType t = fallback;
  if (v) {
    auto parsed = v->is_string() ? parse_dtype(v->get<std::string>()) : std::nullopt;
    if (!parsed) fail("dtypes", tensor, "unknown dtype " + v->dump());
    t = *parsed;
  }
  for (DType a : allowed)
    if (a == t) return t;
  std::string list;
  for (DType a : allowed) list += (list.empty() ? "" : ", ") + std::string(dtype_name(a));
  fail("dtypes", tensor,
       "dtype of " + tensor + " must be one of " + list + ", got " + std::string(dtype_name(t)));
}

std::pair<double, double> CaseDef::range(const std::string& tensor,
                                         std::pair<double, double> fallback) const {
  const auto* v = find("ranges", tensor);
  if (!v) return fallback;
  const double lo = (*v)[0].get<double>(), hi = (*v)[1].get<double>();
  if (!(lo < hi)) fail("ranges", tensor, "range of " + tensor + " must have low < high");
  return {lo, hi};
}

Tolerance CaseDef::tolerance(const std::string& output, const Tolerance& fallback) const {
  const auto* v = find("tolerance", output);
  if (!v) return fallback;
  Tolerance t = fallback;
  t.atol = v->value("atol", fallback.atol);
  t.rtol = v->value("rtol", fallback.rtol);
  t.reason = (*v)["reason"].get<std::string>();
  return t;
}

}  // namespace kvbench
