#include "runner/backend.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/shell_quote.hpp"
#include "runner/golden_case.hpp"
#include "golden/manifest.hpp"
#include "runner/interrupt.hpp"

namespace kvbench {
namespace fs = std::filesystem;

namespace {

// A fresh folder under the system's temporary folder, removed with everything in it when
// the guard goes.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "kvbench-backend-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("cannot make a temporary folder for the backend");
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The last lines of what the backend printed (at most ~1000 characters).
std::string log_tail(const fs::path& log) {
  std::ifstream in(log);
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > 1000) text = "..." + text.substr(text.size() - 1000);
  return text.empty() ? "" : "; it printed:\n" + text;
}

struct Outcome {
  enum { exited, signalled, timed_out, interrupted } how = exited;
  int code = 0;  // exit status or signal
};

// Runs `command_line` by /bin/sh in its own process group, output to `log`; the group is
// ended (SIGTERM, then SIGKILL) on timeout or when kvbench is interrupted.
Outcome run_shell(const std::string& command_line, const fs::path& log, double timeout_s) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot start the backend (fork failed)");
  if (pid == 0) {
    ::setpgid(0, 0);
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644),
              in = ::open("/dev/null", O_RDONLY);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    if (in >= 0) ::dup2(in, STDIN_FILENO);
    ::execl("/bin/sh", "sh", "-c", command_line.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: whichever runs first, the group exists before a kill
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  Outcome o;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("lost the backend process (waitpid failed)");
    const bool late = elapsed() > timeout_s, stop = interrupt_signal() != 0;
    if (late || stop) {
      o.how = late ? Outcome::timed_out : Outcome::interrupted;
      ::kill(-pid, SIGTERM);
      for (int i = 0; i < 100 && ::waitpid(pid, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ::kill(-pid, SIGKILL);  // the group: children the shell started included
      ::waitpid(pid, &status, 0);
      return o;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(elapsed() < 1 ? 5 : 20));
  }
  if (WIFSIGNALED(status)) {
    o.how = Outcome::signalled;
    o.code = WTERMSIG(status);
  } else {
    o.code = WEXITSTATUS(status);
  }
  return o;
}

}  // namespace

std::string backend_command_line(const std::string& command, const std::string& golden_dir,
                                 const std::string& actual_dir) {
  std::string out = command;
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"{golden}", golden_dir}, {"{actual}", actual_dir}})
    for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + 1)) {
      const std::string quoted = shell_quote(value);
      out.replace(at, key.size(), quoted);
      at += quoted.size() - 1;
    }
  return out;
}

CaseResult run_case_on_backend(const CaseDef& def, const OpCase& op, const BackendCommand& backend) {
  const auto start = std::chrono::steady_clock::now();
  const TempFolder tmp;
  const fs::path golden = tmp.path() / "golden", actual = tmp.path() / "actual",
                 log = tmp.path() / "backend.log";
  fs::create_directories(golden);
  fs::create_directories(actual);
  write_golden_case(def, op, golden.string());
  const std::string stem = case_file_stem(def.name);
  const Outcome o = run_shell(backend_command_line(backend.command, golden.string(), actual.string()), log,
                              backend.timeout_s);
  CaseResult r;
  const fs::path written = actual / (stem + ".safetensors");
  std::error_code ec;
  if (o.how == Outcome::exited && o.code == 0 && fs::exists(written, ec)) {
    const fs::path manifest = golden / (stem + ".json");
    r = check_golden_case(parse_manifest(read_manifest_json(manifest.string()), manifest.string()),
                          written.string());
  } else if (o.how == Outcome::exited && o.code == kBackendNotImplemented) {
    // The backend does not implement this case: nothing was checked, which is not a pass
    // (a run whose every case of an operator skipped exits 1, as on a device that lacks them).
    r.status = Status::skip;
    r.reason = "not implemented by the backend (it exited with status " +
               std::to_string(kBackendNotImplemented) + ")" + log_tail(log);
  } else if (o.how == Outcome::exited && o.code == 0) {
    r.status = Status::fail;
    r.reason = "the backend exited 0 but wrote no " + stem + ".safetensors into {actual}" + log_tail(log);
  } else {
    r.status = Status::fail;
    switch (o.how) {
      case Outcome::timed_out: {
        std::ostringstream limit;
        limit << backend.timeout_s;
        r.reason = "the backend ran past --backend-timeout " + limit.str() + " s (stopped)";
        break;
      }
      case Outcome::interrupted: r.reason = "interrupted while the backend ran (stopped)"; break;
      case Outcome::signalled: r.reason = "the backend was killed by signal " + std::to_string(o.code); break;
      default:
        r.reason = "the backend exited with status " + std::to_string(o.code) +
                   (o.code == 127 ? " (command not found?)" : "");
    }
    r.reason += log_tail(log);
  }
  r.name = def.name;
  r.file = def.file;
  r.op = def.op;
  r.resolved = op.resolved();
  r.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kvbench
