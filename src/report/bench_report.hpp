#pragma once
// The reports of `kvbench bench`: the terminal table (one row per case) and the JSON file.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_case.hpp"
#include "bench/copy_bandwidth.hpp"
#include "cases/case_loader.hpp"
#include "report/name_column.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

// "copy bandwidth: 8.1 GB/s (...)": the yardstick the % column is measured against.
std::string copy_bandwidth_line(const CopyBandwidth& copy, const Repetitions& reps);
// A row: the counter before the name column, status and figures after it.
inline constexpr size_t kBenchRowIndent = 6;      // "%5zu "
inline constexpr size_t kBenchFiguresWidth = 69;  // "  " + status .. %copy
std::string bench_header(const NameColumn& column);
// Under the figures, a line of how it was timed (warm-up, repetitions, shader clock).
std::string bench_row(const BenchResult& r, const NameColumn& column, const Repetitions& reps);

nlohmann::json bench_report_json(const DeviceInfo& device, const CopyBandwidth& copy, const Repetitions& reps,
                                 const std::vector<BenchResult>& results,
                                 const std::vector<CaseFileError>& invalid);

}  // namespace kvbench
