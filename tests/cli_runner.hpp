#pragma once
// Runs the kvbench binary from a test and captures its output and exit status.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line, stdout and stderr together.
inline CommandResult run_command(const std::string& command_line) {
  const std::string command = command_line + " 2>&1";
  CommandResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

// With timeout_s > 0 the command is killed after that many seconds (status 124).
inline CommandResult run_kvbench(const std::string& args, int timeout_s = 0) {
  const std::string limit = timeout_s > 0 ? "timeout " + std::to_string(timeout_s) + " " : "";
  return run_command(limit + std::string(KVBENCH_BINARY) + " " + args);
}

inline std::string source_path(const std::string& relative) {
  return std::string(KVBENCH_SOURCE_DIR) + "/" + relative;
}
