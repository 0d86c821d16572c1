#include "coverage/fault_coverage.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "check/compare.hpp"
#include "core/parallel.hpp"

namespace kvbench {
namespace {

// Threshold of a close detection, reported apart: within 2x of the tolerance.
constexpr double kClose = 2;

std::string ratio_text(double r) {
  if (std::isinf(r)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, r < 100 ? "%.3g" : "%.0f", r);
  return buf;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.bytes().size() == b.bytes().size() &&
         std::memcmp(a.bytes().data(), b.bytes().data(), a.bytes().size()) == 0;
}

// The fault planted in a fresh instance of the case, compared with the golden.
FaultOnCase run_fault(const Operator& op, const SelectedCase& c, const Planted& fault, Planting planting,
                      const TensorSet& inputs, const std::vector<Expected>& golden, bool& applies) {
  FaultOnCase r{.fault = fault.name};
  applies = true;
  try {
    auto faulty = instantiate_case(op, c.def, c.op->args().options());
    faulty->skip_figures();
    if (planting == Planting::faults)
      faulty->set_fault(fault.name);
    else
      faulty->set_variant(fault.name);
    const std::vector<Expected> out = faulty->golden(inputs);
    applies = false;
    for (size_t i = 0; i < golden.size(); ++i) {
      if (same_bits(out[i].value(), golden[i].value())) continue;
      applies = true;
      const Metrics m = compare_output(golden[i], out[i].value(), inputs.at(golden[i].tensor));
      r.over_tolerance = std::max(r.over_tolerance, m.max_over_tolerance);
      r.detected = r.detected || !m.passed();
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

// A ratio as a JSON number; null where it is infinite (a mismatch no tolerance takes).
nlohmann::json number(double r) { return std::isinf(r) ? nlohmann::json(nullptr) : nlohmann::json(r); }

}  // namespace

size_t FaultCoverage::undetected() const {
  size_t n = 0;
  for (const auto& op : operators)
    for (const auto& f : op.faults) n += f.detected_by.empty() ? 1 : 0;
  return n;
}

FaultCoverage compute_fault_coverage(const std::vector<SelectedCase>& cases,
                                     const std::function<void(const CaseFaults&)>& done, Planting planting) {
  FaultCoverage report;
  std::map<std::string, size_t> op_index;
  for (const Operator* op : operators())
    for (const auto& c : cases)
      if (c.def.op == op->id()) {
        op_index[op->id()] = report.operators.size();
        OperatorFaults of{.op = op->id()};
        if (planting == Planting::faults)
          for (const Fault& f : op->signature().faults)
            of.faults.push_back({.fault = {f.name, f.bug, f.source}});
        else
          for (const Variant& v : op->signature().variants)
            of.faults.push_back({.fault = {v.name, v.what, v.source}});
        report.operators.push_back(std::move(of));
        break;
      }
  for (const auto& c : cases) {
    const Operator& op = *find_operator(c.def.op);
    OperatorFaults& of = report.operators[op_index.at(op.id())];
    ++of.cases;
    CaseFaults row{.name = c.def.name, .op = op.id()};
    try {
      c.op->skip_figures();
      const TensorSet inputs = c.op->make_tensors(OutputData::none);
      const std::vector<Expected> golden = c.op->golden(inputs);
      // The faults of one case side by side on the reference threads (each fault's golden
      // made by one task; a reference's own parallel_for nests), recorded in catalogue order.
      std::vector<FaultOnCase> results(of.faults.size());
      std::vector<uint8_t> applied(of.faults.size(), 0);
      parallel_for(static_cast<int64_t>(of.faults.size()), c.op->args().threads(), [&](int64_t i) {
        bool applies = false;
        results[static_cast<size_t>(i)] =
            run_fault(op, c, of.faults[static_cast<size_t>(i)].fault, planting, inputs, golden, applies);
        applied[static_cast<size_t>(i)] = applies;
      });
      for (size_t i = 0; i < of.faults.size(); ++i) {
        FaultSummary& s = of.faults[i];
        FaultOnCase& r = results[i];
        if (!applied[i]) continue;
        ++s.applies;
        if (r.detected) s.detected_by.push_back(row.name);
        s.max_over_tolerance = std::max(s.max_over_tolerance, r.over_tolerance);
        if (!r.detected && (s.nearest_miss.empty() || r.over_tolerance > s.nearest_miss_over_tolerance)) {
          s.nearest_miss = row.name;
          s.nearest_miss_over_tolerance = r.over_tolerance;
        }
        row.faults.push_back(std::move(r));
      }
    } catch (const std::exception& e) {
      row.error = e.what();
    }
    if (done) done(row);
    report.cases.push_back(std::move(row));
  }
  return report;
}

std::string fault_case_line(const CaseFaults& c) {
  std::string line = c.name + ":";
  if (!c.error.empty()) return line + " error: " + c.error + "\n";
  if (c.faults.empty()) line += " no fault applies";
  for (size_t i = 0; i < c.faults.size(); ++i) {
    const FaultOnCase& f = c.faults[i];
    line += (i ? ", " : " ") + f.fault + " " +
            (f.error.empty() ? ratio_text(f.over_tolerance) + (f.detected ? "" : "-") : "error");
  }
  return line + "\n";
}

std::string fault_table(const FaultCoverage& report) {
  std::ostringstream o;
  size_t total = 0;
  for (const auto& op : report.operators) {
    size_t detected = 0;
    for (const auto& f : op.faults) detected += f.detected_by.empty() ? 0 : 1;
    total += op.faults.size();
    o << op.op << ": " << op.cases << " cases, " << op.faults.size() << " faults, " << detected
      << " detected\n";
    for (const auto& f : op.faults) {
      const std::string name = f.fault.name;
      o << "  " << name << std::string(name.size() < 30 ? 30 - name.size() : 1, ' ');
      if (!f.detected_by.empty()) {
        o << "detected by " << f.detected_by.size() << "/" << f.applies << " cases, largest error/tolerance "
          << ratio_text(f.max_over_tolerance) << (f.max_over_tolerance <= kClose ? " (close: within 2x)" : "")
          << "\n";
      } else if (f.applies == 0) {
        o << "UNDETECTED: applies to no case\n";
      } else {
        o << "UNDETECTED: applies to " << f.applies << " cases, nearest miss "
          << ratio_text(f.nearest_miss_over_tolerance) << " (" << f.nearest_miss << ")\n";
      }
    }
  }
  for (const auto& c : report.cases)
    for (const auto& f : c.faults)
      if (!f.error.empty()) o << "error: " << c.name << ": fault " << f.fault << ": " << f.error << "\n";
  o << total << " faults over " << report.operators.size() << " operators, " << report.undetected()
    << " undetected\n";
  return o.str();
}

nlohmann::json fault_json(const FaultCoverage& report) {
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& op : report.operators) {
    nlohmann::json faults = nlohmann::json::array();
    for (const auto& f : op.faults) {
      nlohmann::json j{
          {"name", f.fault.name},         {"bug", f.fault.what},
          {"source", f.fault.source},     {"applies_to", f.applies},
          {"detected_by", f.detected_by}, {"max_error_over_tolerance", number(f.max_over_tolerance)}};
      if (f.detected_by.empty() && !f.nearest_miss.empty())
        j["nearest_miss"] = {{"case", f.nearest_miss},
                             {"error_over_tolerance", number(f.nearest_miss_over_tolerance)}};
      faults.push_back(j);
    }
    ops[op.op] = {{"cases", op.cases}, {"faults", faults}};
  }
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : report.cases) {
    nlohmann::json j{{"name", c.name}, {"op", c.op}, {"faults", nlohmann::json::object()}};
    if (!c.error.empty()) j["error"] = c.error;
    for (const auto& f : c.faults) {
      nlohmann::json e{{"error_over_tolerance", number(f.over_tolerance)}, {"detected", f.detected}};
      if (!f.error.empty()) e["error"] = f.error;
      j["faults"][f.fault] = e;
    }
    cases.push_back(j);
  }
  return {{"operators", ops}, {"cases", cases}, {"undetected", report.undetected()}};
}

size_t failed_variants(const FaultCoverage& report) {
  size_t n = 0;
  for (const auto& op : report.operators)
    for (const auto& v : op.faults) n += v.detected_by.empty() ? 0 : 1;
  for (const auto& c : report.cases)
    for (const auto& v : c.faults) n += v.error.empty() ? 0 : 1;
  return n;
}

std::string variant_table(const FaultCoverage& report) {
  std::ostringstream o;
  size_t total = 0;
  for (const auto& op : report.operators) {
    o << op.op << ": " << op.cases << " cases, " << op.faults.size() << " permitted implementations\n";
    total += op.faults.size();
    for (const auto& v : op.faults) {
      const std::string name = v.fault.name;
      o << "  " << name << std::string(name.size() < 30 ? 30 - name.size() : 1, ' ');
      if (v.detected_by.empty()) {
        o << "passes " << v.applies
          << " cases (the others: bit-identical to the golden), largest error/bound "
          << ratio_text(v.max_over_tolerance) << "\n";
      } else {
        o << "FAILS " << v.detected_by.size() << "/" << v.applies << " cases (largest error/bound "
          << ratio_text(v.max_over_tolerance) << "), e.g. " << v.detected_by.front() << "\n";
      }
    }
  }
  for (const auto& c : report.cases)
    for (const auto& v : c.faults)
      if (!v.error.empty()) o << "error: " << c.name << ": variant " << v.fault << ": " << v.error << "\n";
  o << total << " permitted implementations over " << report.operators.size() << " operators, "
    << failed_variants(report) << " failing\n";
  return o.str();
}

nlohmann::json variant_json(const FaultCoverage& report) {
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& op : report.operators) {
    nlohmann::json variants = nlohmann::json::array();
    for (const auto& v : op.faults)
      variants.push_back({{"name", v.fault.name},
                          {"what", v.fault.what},
                          {"source", v.fault.source},
                          {"cases", v.applies},
                          {"failed_by", v.detected_by},
                          {"max_error_over_tolerance", number(v.max_over_tolerance)}});
    ops[op.op] = {{"cases", op.cases}, {"variants", variants}};
  }
  return {{"operators", ops}, {"failed", failed_variants(report)}};
}

}  // namespace kvbench
