#include "report/junit_report.hpp"

#include <cstdio>

#include "report/failure_text.hpp"

namespace kvbench {
namespace {

// The length of the valid UTF-8 sequence at s[i] and its code point, or 0 when the bytes
// there are not one (overlong forms, surrogates and values past U+10FFFF included).
size_t utf8_sequence(const std::string& s, size_t i, uint32_t& cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  size_t n = 0;
  if (b < 0x80)
    n = 1, cp = b;
  else if (b >= 0xC2 && b <= 0xDF)
    n = 2, cp = b & 0x1F;
  else if (b >= 0xE0 && b <= 0xEF)
    n = 3, cp = b & 0x0F;
  else if (b >= 0xF0 && b <= 0xF4)
    n = 4, cp = b & 0x07;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

std::string hex_byte(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", b);
  return buf;
}

std::string figures(const CaseResult& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "max_abs=%.6g max_rel=%.6g rel_l2=%.6g violations=%zu boundary=%zu",
                r.max_abs(), r.max_rel(), r.rel_l2(), r.violations(), r.boundary());
  return buf;
}

std::string seconds(double ms) {
  char t[32];
  std::snprintf(t, sizeof t, "%.3f", ms / 1000);
  return t;
}

}  // namespace

std::string xml_escape(const std::string& s, bool attribute) {
  std::string o;
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = utf8_sequence(s, i, cp);
    if (n == 0 || cp == 0xFFFE || cp == 0xFFFF || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r')) {
      for (size_t k = 0; k < std::max<size_t>(n, 1); ++k) o += hex_byte(static_cast<unsigned char>(s[i + k]));
      i += std::max<size_t>(n, 1);
      continue;
    }
    switch (cp) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      case '\r': o += "&#13;"; break;  // a raw CR is read back as LF
      case '\t': o += attribute ? "&#9;" : "\t"; break;
      case '\n': o += attribute ? "&#10;" : "\n"; break;
      default: o.append(s, i, n);
    }
    i += n;
  }
  return o;
}

std::string junit_xml(const std::vector<CaseResult>& results, const std::vector<CaseFileError>& invalid,
                      const std::vector<std::string>& repro) {
  size_t failures = 0, skipped = 0;
  double total_ms = 0;
  for (const auto& r : results) {
    failures += r.status == Status::fail;
    skipped += r.status == Status::skip;
    total_ms += r.time_ms;
  }
  const auto attr = [](const std::string& s) { return xml_escape(s, true); };
  const auto text = [](const std::string& s) { return xml_escape(s, false); };
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  x += "<testsuite name=\"kvbench\" tests=\"" + std::to_string(results.size() + invalid.size()) +
       "\" failures=\"" + std::to_string(failures) + "\" errors=\"" + std::to_string(invalid.size()) +
       "\" skipped=\"" + std::to_string(skipped) + "\" time=\"" + seconds(total_ms) + "\">\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    x += "  <testcase classname=\"" + attr(r.op) + "\" name=\"" + attr(r.name) + "\" time=\"" +
         seconds(r.time_ms) + "\"";
    if (r.status == Status::pass) {
      x += "/>\n";
      continue;
    }
    x += ">\n";
    if (r.status == Status::skip) {
      x += "    <skipped message=\"" + attr(r.reason) + "\">" + text(r.reason + "\nfile: " + r.file) +
           "</skipped>\n";
    } else {
      // The message a viewer shows first: the reason, else the first failing output's count
      // and tolerance. No output compared (a missing or unreadable file): no figures at all.
      const std::vector<std::string> lines = failure_lines(r);
      const std::string message = !r.reason.empty() ? r.reason : !lines.empty() ? lines[0] : figures(r);
      std::string body = r.outputs.empty() ? r.reason : figures(r);
      if (!r.outputs.empty())
        for (const auto& line : lines) body += "\n" + line;
      body += "\nfile: " + r.file;
      if (i < repro.size() && !repro[i].empty()) body += "\nrepro: " + repro[i];
      x += "    <failure message=\"" + attr(message) + "\">" + text(body) + "</failure>\n";
    }
    x += "  </testcase>\n";
  }
  for (const auto& e : invalid) {
    const std::string message = e.to_string();
    x += "  <testcase classname=\"invalid-case-file\" name=\"" +
         attr(e.case_name.empty() ? e.file : e.case_name) + "\" time=\"0.000\">\n    <error message=\"" +
         attr(message) + "\">" + text(message) + "</error>\n  </testcase>\n";
  }
  return x + "</testsuite>\n</testsuites>\n";
}

std::string junit_incomplete_xml() {
  const std::string message =
      "the kvbench run did not finish: it was killed, crashed or is still running, and wrote no results";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
         "<testsuite name=\"kvbench\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0.000\">\n"
         "  <testcase classname=\"kvbench\" name=\"incomplete-run\" time=\"0.000\">\n    <error message=\"" +
         message + "\">" + message + "</error>\n  </testcase>\n</testsuite>\n</testsuites>\n";
}

}  // namespace kvbench
