#pragma once
// Golden data for other backends: one safetensors file and one JSON manifest per
// expanded case (specs/golden-format.md), and the check of a backend's outputs against them.
#include <string>

#include <nlohmann/json.hpp>

#include "golden/manifest.hpp"
#include "ops/operator.hpp"
#include "runner/case_result.hpp"

namespace kvbench {

// The golden format kvbench writes (the manifest's "format"; specs/golden-format.md): 3 is
// format 2 with the checksum of every tensor. A manifest without one is format 1 (dense
// alternates, whole expected_f64 and byte-per-element touched of in-place outputs); `check`
// still reads 1 and 2, without checksums to verify.
inline constexpr int kGoldenFormat = 5;

// The file name (without extension) of a case's golden files: the case name with
// "[" -> ".", "=" -> "-", "," -> ".", "]" dropped, any other unsafe character -> "_".
std::string case_file_stem(const std::string& case_name);

// fnv1a64 of the expanded case (op, name, seed and the sweep-substituted document, and the
// SHA-256 of each file it takes inputs from), hex.
std::string case_hash(const CaseDef& def, const OpCase& op);

// Computes the reference (no device needed) and writes DIR/<stem>.safetensors and
// DIR/<stem>.json: both to temporaries first, both synced, then renamed (data, then
// manifest), so a failure leaves neither and a manifest never names missing data. Returns
// the number of bytes written.
size_t write_golden_case(const CaseDef& def, const OpCase& op, const std::string& dir);

// Compares the outputs in `actual_path` (a safetensors file holding each output under its
// own name) with the golden case `manifest` describes. Anything wrong with either file (not
// a regular file, truncated, corrupt header, a missing tensor, a wrong dtype or shape) fails
// the case with a reason naming the file and the tensor; nothing is thrown.
CaseResult check_golden_case(const GoldenManifest& manifest, const std::string& actual_path);

}  // namespace kvbench
