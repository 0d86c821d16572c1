#include "runner/shrink.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "ops/operator.hpp"

namespace kvbench {
namespace fs = std::filesystem;

namespace {

Failure::Kind kind_of(const Metrics& m) {
  if (m.violations == 0) return Failure::none;
  return m.nonfinite_mismatches > 0 ? Failure::nan : Failure::mismatch;
}

std::string shortened(std::string s, size_t n = 120) {
  if (s.size() > n) s = s.substr(0, n) + "...";
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

std::string outcome_text(const CaseResult& r) {
  if (r.status == Status::pass) return "passes";
  if (r.status == Status::skip) return "skips (" + shortened(r.reason, 80) + ")";
  const Failure f = failure_of(r);
  return "fails otherwise: " + f.text() +
         (f.kind == Failure::crash ? " (" + shortened(r.reason, 80) + ")" : "");
}

class Shrinker {
 public:
  Shrinker(const CaseDef& failing, const RunOptions& options, const Failure& target, const CaseRunner& run,
           int max_runs, const std::function<void(const std::string&)>& log)
      : current_(failing),
        options_(options),
        target_(target),
        run_(run),
        max_runs_(max_runs),
        log_(log),
        op_(find_operator(failing.op)) {
    current_.swept_from.clear();
  }

  ShrinkOutcome shrink() {
    const Signature& sig = op_->signature();
    bool changed = true;
    for (int round = 1; changed && !out_of_runs_; ++round) {
      changed = false;
      for (const std::string& key : sig.sizes) {
        const Param* p = sig.param(key);
        if (!p || !current_.body.contains(p->section) || !current_.body[p->section].contains(key))
          continue;  // not written
        const nlohmann::json& v = current_.body[p->section][key];
        const int64_t floor = std::max<int64_t>(1, p->min ? static_cast<int64_t>(*p->min) : 1);
        if (v.is_number_integer()) {
          changed |= reduce(key, floor, round > 1,
                            [&](nlohmann::json& body) -> nlohmann::json& { return body[p->section][key]; });
        } else if (v.is_array() && p->section == "inputs") {
          changed |= shorten(key, round > 1);
          for (size_t i = 0; i < current_.body[p->section][key].size() && !out_of_runs_; ++i)
            changed |=
                reduce(key + "[" + std::to_string(i) + "]", floor, round > 1,
                       [&](nlohmann::json& body) -> nlohmann::json& { return body[p->section][key][i]; });
        }  // a value from a file keeps its size: the file fixes it
        if (out_of_runs_) break;
      }
    }
    return {current_, runs_, out_of_runs_};
  }

 private:
  // Whether `body` (a changed copy of the current case's) fails as the target. `change`
  // names the change for the log.
  bool fails(const nlohmann::json& body, const std::string& change) {
    if (runs_ >= max_runs_) {
      out_of_runs_ = true;
      return false;
    }
    CaseDef c = current_;
    c.body = body;
    std::unique_ptr<OpCase> candidate;
    try {
      candidate = instantiate_case(*op_, c, options_);
    } catch (const CaseError& e) {
      log_("  try " + change + ": not allowed (" + e.pointer() + ": " + shortened(e.what(), 100) + ")");
      return false;
    }
    ++runs_;
    candidate->skip_figures();
    CaseResult r;
    try {
      r = run_(c, *candidate);
    } catch (const std::exception& e) {
      r.status = Status::fail;
      r.reason = e.what();
    }
    const bool same = target_.matches(r);
    log_("  try " + change + ": " + (same ? "fails the same way" : outcome_text(r)));
    return same;
  }

  // The least value of the integer at `slot` that still fails, from [floor, current]
  // (bisection: a failure at x is taken to mean failures above x). In later rounds one less
  // than the current value is tried first, and a pass there ends the search.
  bool reduce(const std::string& label, int64_t floor, bool recheck,
              const std::function<nlohmann::json&(nlohmann::json&)>& slot) {
    const int64_t now = slot(current_.body).get<int64_t>();
    if (now <= floor) return false;
    auto with = [&](int64_t x) {
      nlohmann::json body = current_.body;
      slot(body) = x;
      return body;
    };
    auto attempt = [&](int64_t x) {
      return fails(with(x), label + " " + std::to_string(now) + " -> " + std::to_string(x));
    };
    int64_t failing = now, passing = floor - 1;
    if (recheck) {
      if (!attempt(now - 1)) return false;
      failing = now - 1;
    }
    if (failing > floor) {
      if (attempt(floor))
        failing = floor;
      else
        passing = floor;
    }
    while (failing - passing > 1 && !out_of_runs_) {
      const int64_t mid = passing + (failing - passing) / 2;
      if (attempt(mid))
        failing = mid;
      else
        passing = mid;
    }
    return accept(with(failing), label, std::to_string(now), std::to_string(failing), failing != now);
  }

  // Fewer entries of an inputs array (per batch lengths, positions): it and every other
  // integer array of the inputs section with as many entries keep their first n.
  bool shorten(const std::string& key, bool recheck) {
    const size_t now = current_.body["inputs"][key].size();
    if (now <= 1) return false;
    auto with = [&](size_t n) {
      nlohmann::json body = current_.body;
      for (auto& [k, v] : body["inputs"].items())
        if (v.is_array() && v.size() == now) v.erase(v.begin() + static_cast<std::ptrdiff_t>(n), v.end());
      return body;
    };
    auto attempt = [&](size_t n) {
      return fails(with(n), "entries of " + key + " " + std::to_string(now) + " -> " + std::to_string(n));
    };
    size_t failing = now, passing = 0;
    if (recheck) {
      if (!attempt(now - 1)) return false;
      failing = now - 1;
    }
    if (failing > 1) {
      if (attempt(1))
        failing = 1;
      else
        passing = 1;
    }
    while (failing - passing > 1 && !out_of_runs_) {
      const size_t mid = passing + (failing - passing) / 2;
      if (attempt(mid))
        failing = mid;
      else
        passing = mid;
    }
    return accept(with(failing), "entries of " + key, std::to_string(now), std::to_string(failing),
                  failing != now);
  }

  bool accept(nlohmann::json body, const std::string& label, const std::string& from, const std::string& to,
              bool changed) {
    if (!changed) return false;
    current_.body = std::move(body);
    log_("step: " + label + " " + from + " -> " + to);
    return true;
  }

  CaseDef current_;
  const RunOptions& options_;
  const Failure& target_;
  const CaseRunner& run_;
  int max_runs_, runs_ = 0;
  bool out_of_runs_ = false;
  const std::function<void(const std::string&)>& log_;
  const Operator* op_;
};

}  // namespace

std::string Failure::text() const {
  switch (kind) {
    case none: return "no failure";
    case mismatch: return "mismatch in " + tensor;
    case nan: return "NaN/Inf in " + tensor;
    case crash: return "crash (no output compared)";
  }
  return "?";
}

Failure failure_of(const CaseResult& r) {
  if (r.status != Status::fail) return {};
  for (const auto& o : r.outputs)
    if (const Failure::Kind k = kind_of(o.metrics); k != Failure::none) return {k, o.metrics.tensor};
  return {Failure::crash, ""};
}

bool Failure::matches(const CaseResult& r) const {
  if (kind == none || kind == crash) return failure_of(r).kind == kind;
  for (const auto& o : r.outputs)
    if (o.metrics.tensor == tensor) return kind_of(o.metrics) == kind;
  return false;
}

ShrinkOutcome shrink_case(const CaseDef& failing, const RunOptions& options, const Failure& target,
                          const CaseRunner& run, int max_runs,
                          const std::function<void(const std::string&)>& log) {
  if (!find_operator(failing.op)) throw std::invalid_argument("unknown operator " + failing.op);
  return Shrinker(failing, options, target, run, max_runs, log).shrink();
}

nlohmann::json standalone_case_document(const CaseDef& def, const std::string& name,
                                        const std::string& description, const std::string& folder,
                                        bool& outside) {
  nlohmann::json doc = def.body;
  doc.erase("sweep");
  doc.erase("slow");
  doc["name"] = name;
  doc["description"] = description;
  outside = false;
  if (doc.contains("inputs"))
    for (auto& [key, v] : doc["inputs"].items()) {
      if (!v.is_object()) continue;
      const fs::path written = v["file"].get<std::string>();
      const fs::path from =
          fs::absolute(written.is_absolute() ? written : fs::path(def.file).parent_path() / written);
      const fs::path rel =
          fs::weakly_canonical(from).lexically_relative(fs::weakly_canonical(fs::absolute(folder)));
      v["file"] = rel.empty() ? from.string() : rel.string();
      outside |= rel.empty() || *rel.begin() == "..";
    }
  return doc;
}

}  // namespace kvbench
