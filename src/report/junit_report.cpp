#include "report/junit_report.hpp"

#include <cstdio>

namespace kvbench {
namespace {

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string figures(const CaseResult& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "max_abs=%.6g max_rel=%.6g rel_l2=%.6g violations=%zu boundary=%zu", r.max_abs(),
                r.max_rel(), r.rel_l2(), r.violations(), r.boundary());
  return buf;
}

}  // namespace

std::string junit_xml(const std::vector<CaseResult>& results, const std::vector<CaseFileError>& invalid,
                      const std::vector<std::string>& repro) {
  size_t failures = 0, skipped = 0;
  double seconds = 0;
  for (const auto& r : results) {
    failures += r.status == Status::fail;
    skipped += r.status == Status::skip;
    seconds += r.time_ms / 1000;
  }
  char head[256];
  std::snprintf(head, sizeof head, "<testsuite name=\"kvbench\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n",
                results.size() + invalid.size(), failures, invalid.size(), skipped, seconds);
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n" + std::string(head);
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    char t[32];
    std::snprintf(t, sizeof t, "%.3f", r.time_ms / 1000);
    x += "  <testcase classname=\"" + escape(r.op) + "\" name=\"" + escape(r.name) + "\" file=\"" + escape(r.file) +
         "\" time=\"" + t + "\"";
    if (r.status == Status::pass) {
      x += "/>\n";
      continue;
    }
    x += ">\n";
    if (r.status == Status::skip) {
      x += "    <skipped message=\"" + escape(r.reason) + "\"/>\n";
    } else {
      const std::string message = r.reason.empty() ? figures(r) : r.reason;
      // No output compared (a missing or unreadable file): no figures, only the reason.
      std::string body = r.outputs.empty() ? r.reason : figures(r);
      if (!r.worst().empty()) body += "\nworst: " + r.worst();
      for (const auto& o : r.outputs)
        if (o.metrics.violations)
          body += "\n" + o.metrics.tensor + ": " + std::to_string(o.metrics.violations) + " of " +
                  std::to_string(o.metrics.elements) + " elements out of tolerance";
      if (i < repro.size() && !repro[i].empty()) body += "\nrepro: " + repro[i];
      x += "    <failure message=\"" + escape(message) + "\">" + escape(body) + "</failure>\n";
    }
    x += "  </testcase>\n";
  }
  for (const auto& e : invalid)
    x += "  <testcase classname=\"invalid-case-file\" name=\"" + escape(e.case_name.empty() ? e.file : e.case_name) +
         "\" file=\"" + escape(e.file) + "\">\n    <error message=\"" + escape(e.to_string()) + "\"/>\n  </testcase>\n";
  return x + "</testsuite>\n</testsuites>\n";
}

}  // namespace kvbench
