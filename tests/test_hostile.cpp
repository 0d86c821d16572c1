// The catalogue of hostile case files (tests/data/hostile/, one problem each, expected
// pointers and messages in tests/data/hostile_expected.json): each makes its file invalid
// with exit 2 and a message naming the file and the field; none crashes or hangs.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace fs = std::filesystem;

TEST_CASE("hostile: every catalogued case file is invalid with its file, pointer and message") {
  std::ifstream in(source_path("tests/data/hostile_expected.json"));
  const nlohmann::json expected = nlohmann::json::parse(in);
  REQUIRE(expected.size() >= 60);
  // One run names every file (one process per file took 5 s of the unit tests): each file's
  // own line, its pointer and its message. `timeout` turns a hang into a failure of this
  // test rather than of the whole run.
  std::string files;
  for (auto it = expected.begin(); it != expected.end(); ++it)
    files += " " + source_path("tests/data/hostile/" + it.key());
  const auto r = run_kvbench("list" + files + " --max-cases 10000", 60);
  CHECK(r.status == 2);
  std::istringstream lines(r.output);
  std::map<std::string, std::string> lines_of;  // the error lines naming each file
  for (std::string line; std::getline(lines, line);)
    if (const size_t at = line.find("hostile/"); at != std::string::npos) {
      const size_t colon = line.find(':', at);
      if (colon != std::string::npos) lines_of[line.substr(at + 8, colon - at - 8)] += line.substr(at) + "\n";
    }
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    CAPTURE(it.key());
    REQUIRE_MESSAGE(lines_of.count(it.key()) == 1, r.output.substr(0, 600));
    const std::string& own = lines_of.at(it.key());
    const std::string pointer = it.value()["pointer"];
    const std::string where = "hostile/" + it.key() + (pointer.empty() ? ": " : ": " + pointer);
    CHECK_MESSAGE(own.find(where) != std::string::npos, own);
    CHECK_MESSAGE(own.find(it.value()["message"].get<std::string>()) != std::string::npos, own);
  }
}

TEST_CASE("hostile: the whole catalogue in one run loses no valid case") {
  const auto r = run_kvbench(
      "list " + source_path("tests/data/hostile") + " " + source_path("tests/data/mixed/valid.json"), 60);
  CHECK(r.status == 2);
  CHECK(r.output.find("valid_small") != std::string::npos);
}

TEST_CASE("hostile: file-system problems are the file's error, not the run's end") {
  const fs::path dir = fs::temp_directory_path() / "kvbench_hostile_fs";
  fs::remove_all(dir);
  fs::create_directories(dir / "loop");
  fs::create_directories(dir / "given");
  fs::copy_file(source_path("tests/data/mixed/valid.json"), dir / "valid.json");
  fs::create_directory_symlink("..", dir / "loop" / "up");  // a folder that contains itself
  fs::create_symlink("self.json", dir / "self.json");       // a link to itself
  fs::create_symlink("/dev/zero", dir / "zero.json");       // endless bytes
  REQUIRE(mkfifo((dir / "fifo.json").c_str(), 0600) == 0);  // must not be opened (it would block)
  REQUIRE(mkfifo((dir / "given" / "fifo.json").c_str(), 0600) == 0);
  fs::create_symlink("loop.json", dir / "given" / "loop.json");
  {
    std::ofstream big(dir /
                      "big"
                      ".json");
    big << "{\"op\": \"x\", \"description\": \"" << std::string(17 << 20, 'a') << "\"}";
  }
  const std::string given = (dir / "given").string();
  const auto r = run_kvbench("list " + dir.string() + " " + given + "/fifo.json " + given +
                                 "/loop.json /proc/self/mem " + (dir / "valid.json").string() + " " +
                                 (dir / "loop" / ".." / "valid.json").string(),
                             60);
  CHECK(r.status == 2);
  CHECK(r.output.find("big.json: the file is 17825") != std::string::npos);
  // Named on the command line, and met in a folder: the same errors, nothing skipped in silence.
  CHECK(r.output.find("given/fifo.json: not a regular file or folder (a FIFO)") != std::string::npos);
  CHECK(r.output.find("kvbench_hostile_fs/fifo.json: not a regular file or folder (a FIFO)") !=
        std::string::npos);
  CHECK(r.output.find("zero.json: not a regular file or folder (a device)") != std::string::npos);
  CHECK(r.output.find("given/loop.json: cannot read the file: Too many levels of symbolic links") !=
        std::string::npos);
  CHECK(r.output.find("self.json: cannot read the file: Too many levels of symbolic links") !=
        std::string::npos);
  CHECK(r.output.find("/proc/self/mem: cannot read the file") != std::string::npos);  // its read fails midway
  CHECK(r.output.find("1 cases") != std::string::npos);  // valid.json reached three ways is read once
  fs::remove_all(dir);
}

TEST_CASE("hostile: an unreadable case file says Permission denied, named or in a folder") {
  const fs::path dir = fs::temp_directory_path() / "kvbench_hostile_mode000";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all);  // another user (below) must reach the file
  fs::copy_file(source_path("tests/data/mixed/valid.json"), dir / "locked.json");
  fs::permissions(dir / "locked.json", fs::perms::none);
  const std::string file = (dir / "locked.json").string();
  // root reads any file: run kvbench as nobody then (CI runs as root).
  const std::string as = geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  if (!as.empty() && run_command(as + "true").status != 0) {
    MESSAGE("setpriv cannot drop root here: the mode-000 file is not tested");
  } else {
    const auto named = run_command(as + KVBENCH_BINARY + " list " + file);
    CHECK(named.status == 2);
    CHECK_MESSAGE(
        named.output.find("locked.json: cannot read the file: Permission denied") != std::string::npos,
        named.output);
    const auto folder = run_command(as + KVBENCH_BINARY + " list " + dir.string());
    CHECK(folder.status == 2);
    CHECK_MESSAGE(
        folder.output.find("locked.json: cannot read the file: Permission denied") != std::string::npos,
        folder.output);
  }
  fs::remove_all(dir);
}

namespace {
struct ChildRun {
  int status = 0;
  double seconds = 0;
  long max_rss_kib = 0;
};

// kvbench with `args`, output discarded, its exit status, wall time and peak RSS (wait4).
ChildRun run_measured(const std::vector<std::string>& args) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    alarm(20);  // a hang fails the test, not the run
    std::vector<char*> argv{const_cast<char*>("kvbench")};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(KVBENCH_BINARY, argv.data());
    _exit(127);
  }
  ChildRun r;
  struct rusage usage {};
  REQUIRE(wait4(pid, &r.status, 0, &usage) == pid);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.max_rss_kib = usage.ru_maxrss;
  return r;
}
}  // namespace

// The memory a case's numbers imply is checked before anything of that size exists: each of
// these files is rejected at its field within 1 s and 100 MiB of RSS above what kvbench
// needs to list a small valid file (measured by wait4; the baseline absorbs a sanitizer
// build's shadow memory, about 330 MiB under ASan).
TEST_CASE("hostile: sizes past the budget are rejected within 1 s and 100 MiB") {
  const ChildRun baseline = run_measured({"list", source_path("tests/data/mixed/valid.json")});
  REQUIRE(WIFEXITED(baseline.status));
  REQUIRE(WEXITSTATUS(baseline.status) == 0);
  for (const char* name :
       {"fia_batch_2_pow_27.json", "fia_batch_int32_max.json", "fia_b_s1_d_int32_max.json",
        "plain_tokens_int32_max.json", "kvc_40_gb_cache.json", "mhca_2_pow_40_pages.json"}) {
    CAPTURE(name);
    const ChildRun r = run_measured({"list", source_path(std::string("tests/data/hostile/") + name)});
    CHECK((WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2));
    CHECK(r.seconds < 1.0);
    CHECK(r.max_rss_kib < baseline.max_rss_kib + 100 * 1024);
  }
}

TEST_CASE("hostile: --filter never backtracks exponentially") {
  const auto r = run_kvbench(
      "list " + source_path("tests/data/mixed/valid.json") + " --filter '(a*)*b' --allow-empty", 20);
  CHECK(r.status == 0);
  CHECK(r.output.find("0 cases") != std::string::npos);
  CHECK(run_kvbench("list " + source_path("tests/data/mixed/valid.json") + " --filter '('", 20).status == 2);
}
