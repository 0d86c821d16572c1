#include "report/bench_report.hpp"

#include <cstdio>

#include "report/failure_text.hpp"
#include "report/json_report.hpp"

namespace kvbench {

std::string clock_text(const std::optional<double>& mhz) {
  if (!mhz) return "shader clock unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "shader clock %.0f MHz", *mhz);
  return buf;
}

std::string timing_text(const RepeatedTiming& t, const Repetitions& reps) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%d back-to-back runs%s after a %.1f ms warm-up of %lld runs, %s", t.reps,
                !reps.flush.empty() ? " with the cache flushed between them" : "", t.warmup_ms,
                static_cast<long long>(t.warmup_count), clock_text(t.clock_mhz).c_str());
  return buf;
}

std::string copy_bandwidth_line(const CopyBandwidth& copy, const Repetitions& reps) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "copy bandwidth: %.2f GB/s (uvec4 copy of %zu MiB read through a texel view, read + written "
                "/ median device time %.3f ms "
                "of %s)",
                copy.gbps, copy.bytes >> 20, copy.timing.time.median_ms,
                timing_text(copy.timing, reps).c_str());
  return buf;
}

std::string bench_header(const NameColumn& c) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s  %-6s %10s %10s %10s %10s %8s %7s %8s", c.pad("case").c_str(), "status",
                "median_ms", "min_ms", "max_ms", "MB_moved", "GB/s", "%copy", "GFLOPS");
  return buf;
}

std::string bench_row(const BenchResult& r, const NameColumn& column, const Repetitions& reps) {
  const CaseResult& c = r.check;
  char status[16];
  std::snprintf(status, sizeof status, "%-6s", status_name(c.status));
  if (!r.timed()) return column.cell(c.name) + "  " + status + " " + c.reason;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s %10.3f %10.3f %10.3f %10.3g %8.3g %6.1f%%", status,
                r.timing.time.median_ms, r.timing.time.min_ms, r.timing.time.max_ms, r.bytes / 1e6, r.gbps,
                r.percent_of_copy);
  char gflops[32] = "       -";  // an operator that counts no FLOPs
  if (r.flops > 0) std::snprintf(gflops, sizeof gflops, "%8.3g", r.gflops);
  std::string row = column.cell(c.name) + "  " + buf + " " + gflops;
  row += "\n      " + timing_text(r.timing, reps);
  const auto& kernels = r.timing.kernels;
  if (kernels.size() > 1) {  // where the time goes when a case runs several kernels
    row += "\n      kernels:";
    for (size_t k = 0; k < kernels.size(); ++k) {
      char part[160];
      std::snprintf(part, sizeof part, "%s %s %.3f ms", k ? "," : "", kernels[k].shader.c_str(),
                    kernels[k].ms);
      row += part;
    }
  }
  if (c.status == Status::fail)
    for (const auto& line : failure_lines(c)) row += "\n      " + line;
  return row;
}

nlohmann::json timing_json(const RepeatedTiming& t) {
  nlohmann::json j{{"warmup_count", t.warmup_count}, {"reps", t.reps}};
  put_number(j, "warmup_ms", t.warmup_ms);
  // Where the device has no shader clock the figure is null and its source says so.
  j["shader_clock_mhz"] = nullptr;
  if (t.clock_mhz) put_number(j, "shader_clock_mhz", *t.clock_mhz);
  j["shader_clock_source"] =
      t.clock_mhz ? "VK_KHR_shader_clock subgroup clock against timestamp queries" : "unknown";
  return j;
}

nlohmann::json bench_report_json(const DeviceInfo& device, const CopyBandwidth& copy, const Repetitions& reps,
                                 const std::vector<BenchResult>& results,
                                 const std::vector<CaseFileError>& invalid) {
  nlohmann::json j{
      {"format_version", kReportFormatVersion},
      {"kvbench_version", KVBENCH_VERSION},
      {"device", {{"name", device.name}, {"type", device.type}, {"driver", device.driver}}},
      {"copy_bytes", copy.bytes},
      {"warmup", reps.warmup},
      {"warmup_min_ms", reps.warmup_ms},
      {"reps", reps.reps},
      {"flush_cache", !reps.flush.empty()},
      {"flush_bytes", !reps.flush.empty() ? nlohmann::json(reps.flush_bytes()) : nlohmann::json(nullptr)},
      {"shader_clock_extension", device.shader_clock},
      {"calibrated_timestamps_extension", device.calibrated_timestamps}};
  put_number(j, "copy_bandwidth_gbps", copy.gbps);
  j["copy_timing"] = timing_json(copy.timing);
  j["cases"] = nlohmann::json::array();
  for (const auto& r : results) {
    const CaseResult& c = r.check;
    nlohmann::json entry{{"name", c.name}, {"file", c.file}, {"op", c.op}, {"status", status_name(c.status)}};
    if (!c.reason.empty()) entry["reason"] = c.reason;
    entry["resolved"] = c.resolved.is_object() ? c.resolved : nlohmann::json::object();
    // An untimed case (skipped, or its check threw) has null figures, not zeros a reader could average.
    for (const auto& [key, v] : {std::pair<const char*, double>{"median_ms", r.timing.time.median_ms},
                                 {"min_ms", r.timing.time.min_ms},
                                 {"max_ms", r.timing.time.max_ms},
                                 {"gbps", r.gbps},
                                 {"percent_of_copy", r.percent_of_copy}}) {
      if (r.timed())
        put_number(entry, key, v);
      else
        entry[key] = nullptr;
    }
    entry["bytes"] = r.timed() ? nlohmann::json(static_cast<uint64_t>(r.bytes)) : nlohmann::json(nullptr);
    // FLOPs only where the operator counts them (attention), else null.
    entry["flops"] = r.timed() && r.flops > 0 ? nlohmann::json(r.flops) : nlohmann::json(nullptr);
    if (r.timed() && r.flops > 0)
      put_number(entry, "gflops", r.gflops);
    else
      entry["gflops"] = nullptr;
    entry["timing"] = r.timed() ? timing_json(r.timing) : nlohmann::json(nullptr);
    entry["kernels"] = nlohmann::json::array();
    for (const auto& kernel : r.timing.kernels) {
      nlohmann::json k{{"shader", kernel.shader}};
      put_number(k, "median_ms", kernel.ms);
      entry["kernels"].push_back(k);
    }
    j["cases"].push_back(entry);
  }
  j["invalid"] = invalid_cases_json(invalid);
  return j;
}

}  // namespace kvbench
