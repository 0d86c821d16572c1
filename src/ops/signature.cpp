// Signature: the look-up of a declared key or tensor, and the documentation of an operator
// (`kvbench ops`: as text, and as JSON).
#include "ops/signature.hpp"

#include <algorithm>
#include <sstream>

namespace kvbench {

const Param* Signature::param(const std::string& name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

const TensorDecl* Signature::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  // A list element: NAME.<digits> of a list declaration.
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 == name.size() ||
      name.find_first_not_of("0123456789", dot + 1) != std::string::npos)
    return nullptr;
  for (const auto& t : tensors)
    if (t.list && t.name == name.substr(0, dot)) return &t;
  return nullptr;
}

bool Signature::takes_file(const std::string& name) const {
  return std::find(from_files.begin(), from_files.end(), name) != from_files.end();
}

const char* param_type_name(ParamType t) {
  switch (t) {
    case ParamType::integer: return "integer";
    case ParamType::boolean: return "boolean";
    case ParamType::number: return "number";
    case ParamType::string: return "string";
    case ParamType::integers: return "integers";
  }
  return "?";
}

std::string bound_text(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

// ---- documentation ------------------------------------------------------------------

namespace {

std::string param_default(const Param& p) {
  if (!p.derived.empty()) return "default " + p.derived;
  if (p.fallback.is_null()) return "required";
  return "default " + p.fallback.dump();
}

std::string param_bounds(const Param& p) {
  std::string s;
  if (!p.allowed.empty()) {
    for (const auto& a : p.allowed)
      s += (s.empty() ? "" : "|") + (a.is_string() ? a.get<std::string>() : a.dump());
    return s;
  }
  if (p.min && p.max) return bound_text(*p.min) + ".." + bound_text(*p.max);
  if (p.min) return ">= " + bound_text(*p.min);
  if (p.max) return "<= " + bound_text(*p.max);
  return "";
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

}  // namespace

std::string Signature::describe() const {
  std::ostringstream o;
  o << id << "\n  " << doc << "\n";
  for (const char* section : kParamSections) {
    bool any = false;
    for (const auto& p : params) {
      if (p.section != section) continue;
      if (!any) o << "\n" << section << "\n";
      any = true;
      o << "  " << pad(p.name, 20) << pad(param_type_name(p.type), 9) << pad(param_default(p), 22)
        << pad(param_bounds(p), 16) << p.doc << "\n";
    }
  }
  o << "\ntensors\n";
  for (const auto& t : tensors) {
    o << "  " << pad(t.name, 20) << pad(role_name(t.role), 8) << pad(t.shape, 34) << t.dtype_rule;
    if (t.range) o << "; range [" << bound_text(t.range->first) << ", " << bound_text(t.range->second) << ")";
    if (!t.present.empty()) o << "; only when " << t.present;
    if (takes_file(t.name)) o << "; may come from a file";
    if (t.list) o << "; or a list " << t.name << ".0, " << t.name << ".1, ...";
    o << "\n" << std::string(30, ' ') << t.doc << "\n";
  }
  std::string dt, rg, tol, files = join(from_files), in;
  for (const auto& t : tensors) {
    if (!t.choices.empty()) dt += (dt.empty() ? "" : ", ") + t.name;
    if (t.range) rg += (rg.empty() ? "" : ", ") + t.name;
    if (t.role != Role::input) tol += (tol.empty() ? "" : ", ") + t.name;
  }
  for (const auto& p : params)
    if (p.section == "inputs") in += (in.empty() ? "" : ", ") + p.name;
  o << "\ncase-file keys for tensors\n  dtypes:    " << (dt.empty() ? "(none)" : dt)
    << "\n  ranges:    " << (rg.empty() ? "(none)" : rg)
    << "\n  tolerance: " << (tol.empty() ? "(none)" : tol)
    << "\n  files:     " << (files.empty() ? "(none)" : files) << (in.empty() ? "" : "; values of " + in)
    << "\n  (inputs: {NAME: {\"file\": PATH, \"tensor\": NAME, \"dtype\": DTYPE}}; specs/case-format.md "
       "\"Inputs from files\")"
    << "\n  sizes:     " << (sizes.empty() ? "(none)" : join(sizes)) << " (what kvbench shrink reduces)\n";
  if (!faults.empty()) o << "\nfaults (kvbench coverage --faults; specs/coverage.md)\n";
  for (const auto& f : faults)
    o << "  " << pad(f.name, 30) << f.bug << (f.source.empty() ? "" : " [" + f.source + "]") << "\n";
  if (!variants.empty())
    o << "\npermitted implementations (kvbench coverage --variants; specs/comparison.md)\n";
  for (const auto& v : variants)
    o << "  " << pad(v.name, 30) << v.what << (v.source.empty() ? "" : " [" + v.source + "]") << "\n";
  return o.str();
}

nlohmann::json Signature::to_json() const {
  nlohmann::json j{
      {"id", id}, {"doc", doc}, {"params", nlohmann::json::array()}, {"tensors", nlohmann::json::array()}};
  for (const auto& p : params) {
    nlohmann::json e{
        {"section", p.section}, {"name", p.name}, {"type", param_type_name(p.type)}, {"doc", p.doc}};
    if (!p.fallback.is_null())
      e["default"] = p.fallback;
    else if (!p.derived.empty())
      e["derived"] = p.derived;
    else
      e["required"] = true;
    if (!p.allowed.empty()) e["allowed"] = p.allowed;
    if (p.min) e["min"] = *p.min;
    if (p.max) e["max"] = *p.max;
    if (p.section == "inputs" && (p.type == ParamType::integer || p.type == ParamType::integers))
      e["from_file"] = true;
    j["params"].push_back(e);
  }
  for (const auto& t : tensors) {
    nlohmann::json e{{"name", t.name},
                     {"role", role_name(t.role)},
                     {"shape", t.shape},
                     {"dtype", t.dtype_rule},
                     {"doc", t.doc}};
    if (!t.choices.empty()) {
      e["dtype_choices"] = nlohmann::json::array();
      for (DType d : t.choices) e["dtype_choices"].push_back(dtype_name(d));
    }
    if (t.range) e["range"] = {t.range->first, t.range->second};
    if (!t.present.empty()) e["present"] = t.present;
    if (takes_file(t.name)) e["from_file"] = true;
    if (t.list) e["list"] = true;
    j["tensors"].push_back(e);
  }
  j["sizes"] = sizes;
  j["faults"] = nlohmann::json::array();
  for (const auto& f : faults)
    j["faults"].push_back({{"name", f.name}, {"bug", f.bug}, {"source", f.source}});
  j["variants"] = nlohmann::json::array();
  for (const auto& v : variants)
    j["variants"].push_back({{"name", v.name}, {"what", v.what}, {"source", v.source}});
  return j;
}

}  // namespace kvbench
