#pragma once
// The reports of `kvbench bench`: the terminal table (one row per case) and the JSON file.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_case.hpp"
#include "bench/copy_bandwidth.hpp"
#include "cases/case_loader.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

// "copy bandwidth: 8.1 GB/s (...)": the yardstick the % column is measured against.
std::string copy_bandwidth_line(const CopyBandwidth& copy, const Repetitions& reps);
std::string bench_header(size_t name_width);
std::string bench_row(const BenchResult& r, size_t name_width);

nlohmann::json bench_report_json(const DeviceInfo& device, const CopyBandwidth& copy, const Repetitions& reps,
                                 const std::vector<BenchResult>& results, const std::vector<CaseFileError>& invalid);

}  // namespace kvbench
