#pragma once
// The golden cases in a folder (or one named case), as `kvbench check` and `kvbench verify`
// find them: every manifest parsed, and whatever cannot be used named as an invalid file.
#include <string>
#include <vector>

#include "cases/case_file_error.hpp"
#include "golden/manifest.hpp"

namespace kvbench {

struct GoldenFolder {
  std::vector<GoldenManifest> found;
  // Each becomes an invalid-file report (exit 2): a bad manifest, an entry named *.json that
  // is not a regular file (a FIFO, a device, a link loop), a folder that cannot be listed.
  std::vector<CaseFileError> invalid;
  // <stem>.safetensors files that no manifest names (a case whose manifest is missing).
  std::vector<std::string> orphan_data;
};

// The case manifests under `golden`: a manifest, a case's .safetensors, or a folder of them
// (searched recursively, links to folders not followed). In a folder every *.json is a
// manifest unless it is valid JSON that neither claims to be one nor has a <stem>.safetensors
// beside it (a report someone saved there); a named file must be one.
GoldenFolder scan_golden(const std::string& golden);

}  // namespace kvbench
