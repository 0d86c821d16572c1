#pragma once
// Another backend in the loop (`kvbench run --backend CMD`): each case's golden is written
// to a fresh temporary folder, CMD computes the outputs from it into another, and kvbench
// checks them as `kvbench check` would (specs/golden-format.md "Another backend in the loop").
#include <string>

#include "runner/case_result.hpp"

namespace kvbench {

struct BackendCommand {
  // A shell command line (run by /bin/sh -c) in which {golden} and {actual} become the
  // folders, shell-quoted.
  std::string command;
  double timeout_s = 600;
};

// The exit status by which a backend says it does not implement the case (the automake and
// CTest convention for a skipped test): the case is reported as SKIP, not as a failure.
inline constexpr int kBackendNotImplemented = 77;

// The command line of `backend` for these folders.
std::string backend_command_line(const std::string& command, const std::string& golden_dir,
                                 const std::string& actual_dir);

// Writes the case's golden, runs the backend on it and checks what it wrote. A backend
// that exits non-zero, is killed, runs past the timeout or writes no output file fails the
// case with the reason (and the end of what it printed); nothing is thrown for those. One
// that exits kBackendNotImplemented skips it with its reason.
CaseResult run_case_on_backend(const CaseDef& def, const OpCase& op, const BackendCommand& backend);

}  // namespace kvbench
