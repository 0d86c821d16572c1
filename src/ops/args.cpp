// Args: one case file's keys checked against the operator's signature (declared, of their
// type, within their bounds, defaults resolved), its dtypes, ranges and tolerances, and the
// resolved values the operator reads, with CaseErrors at the key's JSON pointer.
#include "ops/args.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "cases/schema.hpp"
#include "core/error.hpp"

namespace kvbench {

std::string closest_name(const std::string& key, const std::vector<std::string>& candidates) {
  // Levenshtein distance, case-insensitive; a near miss is within a third of the length.
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string a = lower(key);
  std::string best;
  size_t best_d = std::max<size_t>(1, std::min<size_t>(3, a.size() / 3)) + 1;
  for (const auto& cand : candidates) {
    const std::string b = lower(cand);
    if (a.size() > 64 || b.size() > 64) continue;
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    if (row[b.size()] < best_d) {
      best_d = row[b.size()];
      best = cand;
    }
  }
  return best;
}

namespace {

// A case file names tensors as declared: a list's elements (NAME.0) are not keys of their own.
const TensorDecl* declared_exactly(const Signature& sig, const std::string& name) {
  const TensorDecl* t = sig.tensor(name);
  return t && t->name == name ? t : nullptr;
}

// Integer keys without a declared bound stay within 32 bits: kvbench's kernels index with
// 32-bit integers, and sums and products of two such values never overflow int64.
constexpr double kIntegerBound = 2147483647.0;

bool is_int64(const nlohmann::json& v) {
  return v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX});
}

std::string unknown_key_message(const std::string& section, const std::string& key,
                                const std::vector<std::string>& known, const std::string& what) {
  std::string m = "unknown key '" + key + "' in " + section;
  const std::string near = closest_name(key, known);
  if (!near.empty())
    m += " (did you mean '" + near + "'?)";
  else if (known.empty())
    m += ": this operator takes no " + what;
  else {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    m += "; it takes " + list;
  }
  return m;
}

// An `inputs` key naming a tensor: a CaseError unless the operator lets it come from a file.
void require_file_tensor(const Signature& sig, const std::string& key, const std::string& ptr) {
  const TensorDecl* t = sig.tensor(key);
  std::vector<std::string> choices = sig.from_files;
  for (const auto& p : sig.params)
    if (p.section == "inputs") choices.push_back(p.name);
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  if (!t) {
    const std::string near = closest_name(key, choices);
    throw CaseError(ptr, "unknown key '" + key + "' in inputs" +
                             (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                             "; from files it takes " + (list.empty() ? "nothing" : list));
  }
  if (t->role == Role::output)
    throw CaseError(ptr, key + " is an output: the operator computes it, a file gives inputs");
  if (!sig.takes_file(key))
    throw CaseError(ptr, sig.id + " derives " + key + " (" + t->dtype_rule +
                             (t->doc.empty() ? "" : "; " + t->doc) +
                             "): it cannot come from a file; from files it takes " + list);
}

}  // namespace

nlohmann::json Args::values_from_file(const Param& p, const nlohmann::json& value) {
  if (p.type != ParamType::integer && p.type != ParamType::integers)
    fail(p.name, p.name + " is a " + param_type_name(p.type) + ": only integer inputs come from files");
  FileSource src = parse_file_source(def_, p.name, value, options_.allow_outside_paths);
  // Each value becomes a JSON number (about 16 bytes) and its checks: 64 bytes each at most.
  const std::vector<int64_t> values =
      read_index_values(src, std::max<uint64_t>(1, options_.memory_budget / 64));
  files_.push_back(src);
  if (p.type == ParamType::integers) return values;
  if (values.size() != 1)
    throw CaseError(src.pointer, src.written + " holds " + std::to_string(values.size()) + " values; " +
                                     p.name + " is one integer");
  return values[0];
}

Args::Args(CaseDef def, const Signature& sig, const RunOptions& options)
    : def_(std::move(def)), sig_(&sig), options_(options) {
  check_param_keys();
  for (const auto& p : sig.params) {
    const nlohmann::json* obj = section(p.section.c_str());
    if (!obj || !obj->contains(p.name)) {
      if (!p.fallback.is_null())
        values_[p.name] = p.fallback;
      else if (p.derived.empty())
        fail(p.name, p.name + " is required (" + p.doc + ")");
      continue;
    }
    nlohmann::json v = (*obj)[p.name];
    if (v.is_object()) v = values_from_file(p, v);  // checked below as if written
    values_[p.name] = checked_value(p, v);
  }
  check_dtypes();
  check_ranges();
  check_tolerances();
}

const nlohmann::json* Args::section(const char* name) const {
  const nlohmann::json& body = def_.body;
  return body.contains(name) && body[name].is_object() ? &body[name] : nullptr;
}

// attributes, shapes, inputs: every key declared, in its own section.
void Args::check_param_keys() {
  const Signature& sig = *sig_;
  for (const char* name : kParamSections) {
    const nlohmann::json* obj = section(name);
    if (!obj) continue;
    std::vector<std::string> known;
    for (const auto& p : sig.params)
      if (p.section == name) known.push_back(p.name);
    for (auto it = obj->begin(); it != obj->end(); ++it) {
      const std::string ptr = "/" + std::string(name) + "/" + pointer_token(it.key());
      const Param* p = sig.param(it.key());
      if (p && p->section != name)
        throw CaseError(ptr, "'" + it.key() + "' belongs in " + p->section + ", not " + name);
      if (!p && it.value().is_object() && std::string(name) == "inputs") {  // a tensor from a file
        require_file_tensor(sig, it.key(), def_.locate(ptr));
        files_.push_back(parse_file_source(def_, it.key(), it.value(), options_.allow_outside_paths));
        continue;
      }
      if (!p) throw CaseError(ptr, unknown_key_message(name, it.key(), known, std::string(name)));
    }
  }
}

// A written value of `p`: its type, then each item against the allowed values and bounds.
nlohmann::json Args::checked_value(const Param& p, const nlohmann::json& v) const {
  const bool listed = p.type == ParamType::integers && v.is_array();
  std::vector<nlohmann::json> items;  // the values to check against allowed/min/max
  nlohmann::json stored = v;
  switch (p.type) {
    case ParamType::integer:
      if (!is_int64(v)) fail(p.name, p.name + " must be an integer, got " + v.dump());
      items.push_back(v);
      break;
    case ParamType::boolean:
      if (v.is_boolean())
        stored = v.get<bool>();
      else if (is_int64(v) && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
        stored = v.get<int64_t>() == 1;
      else
        fail(p.name, p.name + " must be true or false (or 0/1), got " + v.dump());
      break;
    case ParamType::number:
      if (!v.is_number() || !std::isfinite(v.get<double>()))
        fail(p.name, p.name + " must be a finite number, got " + v.dump());
      items.push_back(v);
      break;
    case ParamType::string:
      if (!v.is_string()) fail(p.name, p.name + " must be a string, got " + v.dump());
      items.push_back(v);
      break;
    case ParamType::integers:
      if (is_int64(v)) {
        stored = nlohmann::json::array({v});
      } else if (v.is_array()) {
        for (size_t i = 0; i < v.size(); ++i)
          if (!is_int64(v[i])) fail_at(p.name, i, p.name + " must hold integers, got " + v[i].dump());
      } else {
        fail(p.name, p.name + " must be an integer or an array of integers, got " + v.dump());
      }
      for (const auto& x : stored) items.push_back(x);
      break;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const nlohmann::json& x = items[i];
    auto where = [&](const std::string& m) {
      if (listed) fail_at(p.name, i, m);
      fail(p.name, m);
    };
    const std::string label = listed ? p.name + "[" + std::to_string(i) + "]" : p.name;
    if (!p.allowed.empty() && std::find(p.allowed.begin(), p.allowed.end(), x) == p.allowed.end()) {
      std::string list;
      for (const auto& a : p.allowed) list += (list.empty() ? "" : ", ") + a.dump();
      where(label + " must be one of " + list + ", got " + x.dump());
    }
    if (x.is_number() && p.min && x.get<double>() < *p.min)
      where(label + " must be at least " + bound_text(*p.min) + ", got " + x.dump());
    if (x.is_number() && p.max && x.get<double>() > *p.max)
      where(label + " must be at most " + bound_text(*p.max) + ", got " + x.dump());
    if (x.is_number_integer() && !p.max && x.get<double>() > kIntegerBound)
      where(label + " must be at most 2147483647 (kernels index with 32-bit integers), got " + x.dump());
    if (x.is_number_integer() && !p.min && x.get<double>() < -kIntegerBound)
      where(label + " must be at least -2147483647, got " + x.dump());
  }
  return stored;
}

// dtypes: only tensors that take a choice, and only the declared choices.
void Args::check_dtypes() const {
  const nlohmann::json* obj = section("dtypes");
  if (!obj) return;
  std::vector<std::string> choosable;
  for (const auto& t : sig_->tensors)
    if (!t.choices.empty()) choosable.push_back(t.name);
  for (auto it = obj->begin(); it != obj->end(); ++it) {
    const std::string ptr = def_.locate("/dtypes/" + pointer_token(it.key()));
    const TensorDecl* t = declared_exactly(*sig_, it.key());
    if (!t)
      throw CaseError("/dtypes/" + pointer_token(it.key()),
                      unknown_key_message("dtypes", it.key(), choosable, "dtype choice"));
    if (t->choices.empty())
      throw CaseError(ptr, "the dtype of " + t->name + " is not chosen by the case file: " + t->dtype_rule);
    const auto parsed = it.value().is_string() ? parse_dtype(it.value().get<std::string>()) : std::nullopt;
    if (!parsed || std::find(t->choices.begin(), t->choices.end(), *parsed) == t->choices.end())
      throw CaseError(ptr,
                      "dtype of " + t->name + " must be " + t->dtype_rule + ", got " + it.value().dump());
  }
}

// ranges: only generated float inputs that declare one.
void Args::check_ranges() const {
  const nlohmann::json* obj = section("ranges");
  if (!obj) return;
  std::vector<std::string> ranged;
  for (const auto& t : sig_->tensors)
    if (t.range) ranged.push_back(t.name);
  for (auto it = obj->begin(); it != obj->end(); ++it) {
    const std::string ptr = "/ranges/" + pointer_token(it.key());
    const TensorDecl* t = declared_exactly(*sig_, it.key());
    if (!t || !t->range)
      throw CaseError(ptr, unknown_key_message("ranges", it.key(), ranged, "generator ranges"));
    const auto& r = it.value();
    const double lo = r[0].get<double>(), hi = r[1].get<double>();
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi))
      throw CaseError(ptr, "range of " + t->name + " must be finite with low < high, got " + r.dump());
  }
}

// tolerance: only outputs and in-place tensors.
void Args::check_tolerances() const {
  const nlohmann::json* obj = section("tolerance");
  if (!obj) return;
  std::vector<std::string> outputs;
  for (const auto& t : sig_->tensors)
    if (t.role != Role::input) outputs.push_back(t.name);
  for (auto it = obj->begin(); it != obj->end(); ++it) {
    const TensorDecl* t = declared_exactly(*sig_, it.key());
    if (!t || t->role == Role::input)
      throw CaseError("/tolerance/" + pointer_token(it.key()),
                      unknown_key_message("tolerance", it.key(), outputs, "outputs"));
  }
}

const nlohmann::json& Args::value(const std::string& key) const {
  if (!sig_->param(key)) throw std::logic_error(sig_->id + ": no parameter named " + key);
  if (!values_.contains(key))
    throw std::logic_error(sig_->id + ": parameter " + key + " read before it was resolved");
  return values_[key];
}

int64_t Args::integer(const std::string& key) const { return value(key).get<int64_t>(); }
bool Args::boolean(const std::string& key) const { return value(key).get<bool>(); }
double Args::number(const std::string& key) const { return value(key).get<double>(); }
std::string Args::string(const std::string& key) const { return value(key).get<std::string>(); }
std::vector<int64_t> Args::integers(const std::string& key) const {
  return value(key).get<std::vector<int64_t>>();
}

bool Args::written(const std::string& key) const {
  const Param* p = sig_->param(key);
  if (!p) throw std::logic_error(sig_->id + ": no parameter named " + key);
  return def_.body.contains(p->section) && def_.body[p->section].contains(key);
}

void Args::resolve(const std::string& key, nlohmann::json value) {
  if (!sig_->param(key)) throw std::logic_error(sig_->id + ": no parameter named " + key);
  values_[key] = std::move(value);
}

uint64_t Args::require_memory(const std::string& key, std::initializer_list<int64_t> count,
                              uint64_t bytes_each, const std::string& what) const {
  uint64_t n = bytes_each;
  bool overflow = false;
  for (int64_t c : count)
    overflow = overflow || c < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(c), &n);
  if (overflow || n > options_.memory_budget)
    fail(key, what + " would take " + (overflow ? std::string("more than 2^64") : std::to_string(n)) +
                  " bytes, over the memory budget of " + std::to_string(options_.memory_budget) +
                  " bytes (--memory-budget)");
  return n;
}

void Args::require_memory(const std::vector<MemoryTerm>& terms, const std::string& what) const {
  uint64_t total = 0;
  bool overflow = false;
  const Size* largest = nullptr;
  for (const auto& term : terms) {
    uint64_t n = term.bytes_each;
    for (const auto& s : term.sizes) {
      overflow = overflow || s.value < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(s.value), &n);
      if (!largest || s.value > largest->value) largest = &s;
    }
    overflow = overflow || __builtin_add_overflow(total, n, &total);
  }
  if ((overflow || total > options_.memory_budget) && largest)
    fail(largest->key, what + " would take " +
                           (overflow ? std::string("more than 2^64") : std::to_string(total)) +
                           " bytes, over the memory budget of " + std::to_string(options_.memory_budget) +
                           " bytes (--memory-budget)");
}

std::string Args::pointer(const std::string& key) const {
  if (const Param* p = sig_->param(key)) return def_.locate("/" + p->section + "/" + pointer_token(key));
  if (sig_->tensor(key)) return def_.locate("/dtypes/" + pointer_token(key));
  throw std::logic_error(sig_->id + ": no parameter or tensor named " + key);
}

void Args::fail(const std::string& key, const std::string& message) const {
  throw CaseError(pointer(key), message);
}

void Args::fail_at(const std::string& key, size_t index, const std::string& message) const {
  // Values from a file: the pointer names the input, the message the file's element.
  if (const FileSource* f = file_source(key))
    throw CaseError(f->pointer, f->written + ", element " + std::to_string(index) + ": " + message);
  throw CaseError(pointer(key) + "/" + std::to_string(index), message);
}

const FileSource* Args::file_source(const std::string& key) const {
  for (const auto& f : files_)
    if (f.key == key) return &f;
  return nullptr;
}

DType Args::dtype(const std::string& tensor, DType fallback, std::initializer_list<DType> allowed) const {
  const TensorDecl* t = sig_->tensor(tensor);
  if (!t) throw std::logic_error(sig_->id + ": no tensor named " + tensor);
  const auto& dtypes = def_.body.contains("dtypes") ? def_.body["dtypes"] : nlohmann::json::object();
  if (!dtypes.contains(tensor)) return fallback;
  const DType d = *parse_dtype(dtypes[tensor].get<std::string>());  // checked in the constructor
  if (allowed.size() && std::find(allowed.begin(), allowed.end(), d) == allowed.end()) {
    std::string list;
    for (DType a : allowed) list += (list.empty() ? "" : ", ") + std::string(dtype_name(a));
    fail(tensor, "in this case the dtype of " + tensor + " must be one of " + list + ", got " +
                     std::string(dtype_name(d)));
  }
  return d;
}

void Args::require_same_dtype(const std::string& tensor, DType like, const std::string& like_name) const {
  if (dtype(tensor, like) != like)
    fail(tensor,
         tensor + " must have the dtype of " + like_name + " (" + std::string(dtype_name(like)) + ")");
}

std::pair<double, double> Args::range(const std::string& tensor) const {
  const TensorDecl* t = sig_->tensor(tensor);
  if (!t || !t->range)
    throw std::logic_error(sig_->id + ": tensor " + tensor + " declares no generator range");
  const auto& body = def_.body;
  if (body.contains("ranges") && body["ranges"].contains(t->name)) {  // a list's range serves its elements
    const auto& r = body["ranges"][t->name];
    return {r[0].get<double>(), r[1].get<double>()};
  }
  return *t->range;
}

Tolerance Args::tolerance(const std::string& output, const Tolerance& fallback) const {
  const auto& body = def_.body;
  if (!body.contains("tolerance") || !body["tolerance"].contains(output)) return fallback;
  const auto& v = body["tolerance"][output];
  Tolerance t = fallback;
  t.atol = v.value("atol", fallback.atol);
  t.rtol = v.value("rtol", fallback.rtol);
  t.reason = v["reason"].get<std::string>();
  return t;
}

nlohmann::json Args::resolved() const {
  nlohmann::json out = nlohmann::json::object();
  for (const char* section : kParamSections) {
    nlohmann::json s = nlohmann::json::object();
    for (const auto& p : sig_->params)
      if (p.section == section && values_.contains(p.name)) s[p.name] = values_[p.name];
    if (!s.empty()) out[section] = s;
  }
  return out;
}

}  // namespace kvbench
