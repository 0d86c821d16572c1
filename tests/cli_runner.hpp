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

inline CommandResult run_kvbench(const std::string& args) {
  const std::string command = std::string(KVBENCH_BINARY) + " " + args + " 2>&1";
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

inline std::string source_path(const std::string& relative) { return std::string(KVBENCH_SOURCE_DIR) + "/" + relative; }
