#include "coverage/coverage.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <unordered_set>

#include "core/error.hpp"

namespace kvbench {
namespace {

// An integer key with at most this many values between its bounds is enumerated
// (sparseMode 0-8, innerPrecise 0-3, the antiquant modes).
constexpr double kEnumeratedRange = 16;
// Probe cases tried per unused value, and per side of an uncombined pair.
constexpr size_t kSingleProbes = 48, kPairProbes = 4;

bool is_enumerated(const Param& p) {
  if (!p.allowed.empty() || p.type == ParamType::boolean) return true;
  return p.type == ParamType::integer && p.min && p.max && *p.max - *p.min <= kEnumeratedRange;
}

std::vector<nlohmann::json> declared_values(const Param& p) {
  if (!p.allowed.empty()) return p.allowed;
  if (p.type == ParamType::boolean) return {false, true};
  std::vector<nlohmann::json> v;
  for (auto x = static_cast<int64_t>(*p.min); x <= static_cast<int64_t>(*p.max); ++x) v.push_back(x);
  return v;
}

// Every case of one operator with, per enumerated key, the index of its value (-1: absent).
class OperatorCases {
 public:
  OperatorCases(const Operator& op, std::vector<const SelectedCase*> cases)
      : op_(op), cases_(std::move(cases)) {
    const Signature& sig = op.signature();
    for (const auto& p : sig.params)
      if (is_enumerated(p)) keys_.push_back({p.section, p.name, {}});
    for (const auto& t : sig.tensors)
      if (!t.choices.empty()) keys_.push_back({"dtypes", t.name, {}});
    for (auto& k : keys_) {
      const Param* p = sig.param(k.key);
      if (p && k.section != "dtypes")
        for (auto& v : declared_values(*p)) k.values.push_back({v});
      else
        for (DType d : sig.tensor(k.key)->choices) k.values.push_back({std::string(dtype_name(d))});
    }
    for (const auto* c : cases_) resolved_.push_back(c->op->resolved());
    index_.assign(cases_.size(), std::vector<int>(keys_.size(), -1));
    for (size_t c = 0; c < cases_.size(); ++c)
      for (size_t k = 0; k < keys_.size(); ++k) {
        const nlohmann::json& r = resolved_[c];
        if (!r.contains(keys_[k].section) || !r[keys_[k].section].contains(keys_[k].key)) continue;
        const nlohmann::json& v = r[keys_[k].section][keys_[k].key];
        auto& values = keys_[k].values;
        auto it =
            std::find_if(values.begin(), values.end(), [&](const CoveredValue& x) { return x.value == v; });
        if (it == values.end())
          it = values.insert(values.end(), {v});  // a dtype another tensor's gives ("= query")
        index_[c][k] = static_cast<int>(it - values.begin());
        ++it->cases;
      }
  }

  OperatorCoverage report() {
    OperatorCoverage out{.op = op_.id(), .cases = cases_.size()};
    probe_singles();
    pairs(out);
    integers(out);
    out.enumerated = keys_;
    out.probes = probes_;
    return out;
  }

 private:
  using Setting = std::pair<size_t, int>;  // key, value index

  // Whether case `c` with these settings instantiates (the operator's constraints decide)
  // and has them as it ran: a dtype set for a tensor the case then leaves out is no use.
  bool accepts(size_t c, std::initializer_list<Setting> settings) {
    CaseDef def = cases_[c]->def;
    def.swept_from.clear();
    for (const auto& [k, v] : settings)
      def.body[keys_[k].section][keys_[k].key] = keys_[k].values[static_cast<size_t>(v)].value;
    ++probes_;
    nlohmann::json resolved;
    try {
      resolved = instantiate_case(op_, def, cases_[c]->op->args().options())->resolved();
    } catch (const CaseError&) {
      return false;
    }
    for (const auto& [k, v] : settings) {
      const EnumeratedKey& key = keys_[k];
      if (!resolved.contains(key.section) || !resolved[key.section].contains(key.key) ||
          resolved[key.section][key.key] != key.values[static_cast<size_t>(v)].value)
        return false;
    }
    return true;
  }

  // Up to n cases spread over the suite (its first, its last and between).
  std::vector<size_t> spread(size_t n) const {
    std::vector<size_t> out;
    const size_t total = cases_.size();
    for (size_t i = 0; i < std::min(n, total); ++i) out.push_back(total <= n ? i : i * (total - 1) / (n - 1));
    return out;
  }

  void probe_singles() {
    for (size_t k = 0; k < keys_.size(); ++k)
      for (size_t v = 0; v < keys_[k].values.size(); ++v) {
        CoveredValue& value = keys_[k].values[v];
        if (value.cases) continue;
        value.allowed = false;
        for (size_t c : spread(kSingleProbes))
          if (accepts(c, {{k, static_cast<int>(v)}})) {
            value.allowed = true;
            break;
          }
      }
  }

  bool allowed(size_t k, int v) const {
    const CoveredValue& x = keys_[k].values[static_cast<size_t>(v)];
    return x.cases > 0 || x.allowed.value_or(false);
  }

  static uint64_t pair_code(size_t ka, int va, size_t kb, int vb) {
    return (uint64_t{ka} << 48) | (uint64_t(static_cast<uint16_t>(va)) << 32) | (uint64_t{kb} << 16) |
           static_cast<uint16_t>(vb);
  }

  void pairs(OperatorCoverage& out) {
    std::unordered_set<uint64_t> covered;
    for (const auto& row : index_)
      for (size_t a = 0; a < keys_.size(); ++a)
        for (size_t b = a + 1; b < keys_.size() && row[a] >= 0; ++b)
          if (row[b] >= 0) covered.insert(pair_code(a, row[a], b, row[b]));
    // Per key and value, the cases that have it: a pair is probed on those first.
    std::map<Setting, std::vector<size_t>> having;
    for (size_t c = 0; c < index_.size(); ++c)
      for (size_t k = 0; k < keys_.size(); ++k)
        if (index_[c][k] >= 0) having[{k, index_[c][k]}].push_back(c);
    const std::vector<size_t> spread_cases = spread(kPairProbes);
    for (size_t a = 0; a < keys_.size(); ++a)
      for (size_t b = a + 1; b < keys_.size(); ++b)
        for (int va = 0; va < static_cast<int>(keys_[a].values.size()); ++va)
          for (int vb = 0; vb < static_cast<int>(keys_[b].values.size()); ++vb) {
            ++out.pair_combinations;
            if (covered.count(pair_code(a, va, b, vb))) {
              ++out.pairs_covered;
              continue;
            }
            bool ok = false;
            if (allowed(a, va) && allowed(b, vb)) {
              std::vector<size_t> tries;
              for (const Setting& s : {Setting{a, va}, Setting{b, vb}}) {
                const auto& list = having[s];
                tries.insert(tries.end(), list.begin(),
                             list.begin() + static_cast<std::ptrdiff_t>(std::min(kPairProbes, list.size())));
              }
              tries.insert(tries.end(), spread_cases.begin(), spread_cases.end());
              for (size_t c : tries)
                if ((ok = accepts(c, {{a, va}, {b, vb}}))) break;
            }
            if (ok)
              out.pairs_never_combined.push_back({keys_[a].name(), keys_[b].name(),
                                                  keys_[a].values[static_cast<size_t>(va)].value,
                                                  keys_[b].values[static_cast<size_t>(vb)].value});
            else
              ++out.pairs_not_allowed;
          }
  }

  void integers(OperatorCoverage& out) const {
    for (const auto& p : op_.signature().params) {
      if (is_enumerated(p) || (p.type != ParamType::integer && p.type != ParamType::integers)) continue;
      IntegerRange r{.section = p.section, .key = p.name};
      std::vector<int64_t> seen;
      for (const auto& res : resolved_) {
        if (!res.contains(p.section) || !res[p.section].contains(p.name)) continue;
        const nlohmann::json& v = res[p.section][p.name];
        ++r.cases;
        if (v.is_array())
          for (const auto& x : v) seen.push_back(x.get<int64_t>());
        else
          seen.push_back(v.get<int64_t>());
      }
      if (!seen.empty()) {
        r.min = *std::min_element(seen.begin(), seen.end());
        r.max = *std::max_element(seen.begin(), seen.end());
      }
      std::vector<int64_t> bounds{0, 1};
      if (p.max) bounds.push_back(static_cast<int64_t>(*p.max));
      for (int64_t b : bounds) {
        if ((p.min && b < *p.min) || (p.max && b > *p.max)) continue;
        if (std::find_if(r.boundaries.begin(), r.boundaries.end(),
                         [&](const auto& x) { return x.first == b; }) != r.boundaries.end())
          continue;
        r.boundaries.emplace_back(b, std::find(seen.begin(), seen.end(), b) != seen.end());
      }
      out.integers.push_back(r);
    }
  }

  const Operator& op_;
  std::vector<const SelectedCase*> cases_;
  std::vector<nlohmann::json> resolved_;
  std::vector<EnumeratedKey> keys_;
  std::vector<std::vector<int>> index_;
  size_t probes_ = 0;
};

std::string text_of(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::vector<OperatorCoverage> compute_coverage(const std::vector<SelectedCase>& cases) {
  std::vector<OperatorCoverage> out;
  for (const Operator* op : operators()) {
    std::vector<const SelectedCase*> mine;
    for (const auto& c : cases)
      if (c.def.op == op->id()) mine.push_back(&c);
    if (!mine.empty()) out.push_back(OperatorCases(*op, std::move(mine)).report());
  }
  return out;
}

std::string coverage_table(const std::vector<OperatorCoverage>& report, size_t max_pairs) {
  std::ostringstream o;
  for (const auto& op : report) {
    o << op.op << ": " << op.cases
      << " cases\n  enumerated values (cases using each; 0* never used though allowed, 0- not allowed):\n";
    std::string unused;
    for (const auto& k : op.enumerated) {
      std::string line;
      for (const auto& v : k.values) {
        line += (line.empty() ? "" : ", ") + text_of(v.value) + " " + std::to_string(v.cases);
        if (!v.cases) line += v.allowed.value_or(false) ? "*" : "-";
        if (!v.cases && v.allowed.value_or(false))
          unused += (unused.empty() ? "" : ", ") + k.key + "=" + text_of(v.value);
      }
      const std::string name = k.name();
      o << "    " << name << std::string(name.size() < 34 ? 34 - name.size() : 1, ' ') << line << "\n";
    }
    o << "  never used although allowed: " << (unused.empty() ? "none" : unused) << "\n";
    o << "  value pairs of two enumerated keys: " << op.pair_combinations << ", " << op.pairs_covered
      << " combined in a case, " << op.pairs_not_allowed << " not allowed, " << op.pairs_never_combined.size()
      << " allowed but never combined";
    if (!op.pairs_never_combined.empty())
      o << (op.pairs_never_combined.size() > max_pairs
                ? " (the first " + std::to_string(max_pairs) + "; --json lists all)"
                : "")
        << ":";
    o << "\n";
    for (size_t i = 0; i < std::min(max_pairs, op.pairs_never_combined.size()); ++i) {
      const auto& p = op.pairs_never_combined[i];
      o << "    " << p.a_key << "=" << text_of(p.a) << " with " << p.b_key << "=" << text_of(p.b) << "\n";
    }
    o << "  integer keys (min..max used; boundaries: 0, 1 and the declared maximum, + used, - not):\n";
    for (const auto& r : op.integers) {
      const std::string name = r.section + "/" + r.key;
      o << "    " << name << std::string(name.size() < 34 ? 34 - name.size() : 1, ' ');
      if (!r.cases)
        o << "never set";
      else
        o << r.min << ".." << r.max;
      for (const auto& [b, seen] : r.boundaries) o << "  " << b << (seen ? "+" : "-");
      o << "\n";
    }
    o << "\n";
  }
  return o.str();
}

nlohmann::json coverage_json(const std::vector<OperatorCoverage>& report) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : report) {
    nlohmann::json j{{"op", op.op}, {"cases", op.cases}, {"probes", op.probes}};
    j["enumerated"] = nlohmann::json::array();
    j["never_used"] = nlohmann::json::array();
    for (const auto& k : op.enumerated) {
      nlohmann::json values = nlohmann::json::array();
      for (const auto& v : k.values) {
        nlohmann::json e{{"value", v.value}, {"cases", v.cases}};
        if (v.allowed) e["allowed"] = *v.allowed;
        values.push_back(e);
        if (!v.cases && v.allowed.value_or(false))
          j["never_used"].push_back({{"key", k.name()}, {"value", v.value}});
      }
      j["enumerated"].push_back({{"key", k.name()}, {"values", values}});
    }
    j["pairs"] = {{"combinations", op.pair_combinations},
                  {"covered", op.pairs_covered},
                  {"not_allowed", op.pairs_not_allowed},
                  {"never_combined", nlohmann::json::array()}};
    for (const auto& p : op.pairs_never_combined)
      j["pairs"]["never_combined"].push_back(
          {{{"key", p.a_key}, {"value", p.a}}, {{"key", p.b_key}, {"value", p.b}}});
    j["integers"] = nlohmann::json::array();
    for (const auto& r : op.integers) {
      nlohmann::json e{
          {"key", r.section + "/" + r.key}, {"cases", r.cases}, {"boundaries", nlohmann::json::array()}};
      if (r.cases) {
        e["min"] = r.min;
        e["max"] = r.max;
      }
      for (const auto& [b, seen] : r.boundaries) e["boundaries"].push_back({{"value", b}, {"used", seen}});
      j["integers"].push_back(e);
    }
    ops.push_back(j);
  }
  return {{"operators", ops}};
}

}  // namespace kvbench
