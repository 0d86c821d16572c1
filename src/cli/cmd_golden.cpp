#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "cli/commands.hpp"
#include "cli/selection_flags.hpp"
#include "core/parallel.hpp"
#include "runner/golden_case.hpp"
#include "runner/interrupt.hpp"

namespace kvbench {
namespace {

// Admits cases while the memory they may take together stays within the budget; a case
// alone is always admitted (instantiate_case checked it fits the budget by itself).
class MemoryGate {
 public:
  explicit MemoryGate(uint64_t budget) : budget_(budget) {}
  class Hold {
   public:
    Hold(MemoryGate& gate, uint64_t bytes) : gate_(gate), bytes_(bytes) {
      std::unique_lock lock(gate_.mutex_);
      gate_.freed_.wait(lock, [&] { return gate_.in_use_ == 0 || gate_.in_use_ + bytes_ <= gate_.budget_; });
      gate_.in_use_ += bytes_;
    }
    ~Hold() {
      {
        std::lock_guard lock(gate_.mutex_);
        gate_.in_use_ -= bytes_;
      }
      gate_.freed_.notify_all();
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    MemoryGate& gate_;
    uint64_t bytes_;
  };

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  uint64_t budget_, in_use_ = 0;
};

}  // namespace

void add_golden_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "golden",
      "Write golden data (inputs, expected outputs, tolerance policy) for other backends to check against");
  static std::vector<std::string> paths;
  static SelectionFlags selection;
  static std::string out_dir;
  static unsigned jobs = 0;
  static unsigned threads = 0;
  cmd->add_option("paths", paths, "Case files or folders (searched recursively for *.json)")->required();
  cmd->add_option("-o,--output", out_dir, "Folder for the golden files (created if missing)")->required();
  selection.add_to(cmd);
  cmd->add_option("--jobs", jobs,
                  "Cases computed in parallel (default: the hardware threads; cases start only while the "
                  "memory they may "
                  "take together stays within --memory-budget; the files are byte-identical for any value)")
      ->check(CLI::Range(1u, 64u));
  cmd->add_option(
         "--threads", threads,
         "Threads each case's reference uses (default: hardware threads / --jobs, at least 1; the files are "
         "byte-identical for any value)")
      ->check(CLI::Range(1u, 256u));
  cmd->footer(
      "Per case: <stem>.safetensors (inputs, in-place tensors' initial contents, expected.<out> in the "
      "output\n"
      "dtype, expected_f64.<out>, alternate.<out>, touched.<out>) and <stem>.json (the manifest).\n"
      "Format: specs/golden-format.md. No Vulkan device is needed. Exit 2 on invalid cases or a failed "
      "write;\n"
      "SIGINT/SIGTERM finish the cases being written and exit 128 + the signal.");
  cmd->callback([&exit_code] {
    const RunOptions options = selection.run_options(threads);
    selection.with_selection(paths, options, exit_code, [&](Selection& sel) {
      // --jobs cases at once (no more than there are), each with its share of the cores
      // unless --threads says otherwise.
      const unsigned hardware = hardware_threads();
      const unsigned workers =
          static_cast<unsigned>(std::clamp<size_t>(sel.cases.size(), 1, jobs ? jobs : hardware));
      if (!threads)
        for (auto& c : sel.cases) c.op->set_threads(hardware / workers);
      for (const auto& e : sel.errors) std::cerr << "invalid case: " << e.to_string() << "\n";
      // The error_code forms: a folder that cannot be made or searched is a message, not an abort.
      std::error_code made, checked;
      std::filesystem::create_directories(out_dir, made);
      if (!std::filesystem::is_directory(out_dir, checked)) {
        const std::error_code& ec = made ? made : checked;
        std::cerr << "error: cannot create the output folder " << out_dir << (ec ? ": " + ec.message() : "")
                  << "\n";
        exit_code = 2;
        return;
      }
      // Two cases must not share files: refuse names that collapse to the same stem.
      std::map<std::string, std::string> stems;
      for (const auto& c : sel.cases) {
        auto [it, fresh] = stems.emplace(case_file_stem(c.def.name), c.def.name);
        if (!fresh) {
          std::cerr << "error: cases '" << it->second << "' and '" << c.def.name
                    << "' map to the same file name " << it->first << "\n";
          exit_code = 2;
          return;
        }
      }
      // Each worker takes the next case, computes it and streams it to disk; at most
      // `jobs` cases are in memory at once. Output files do not depend on the order.
      const bool tty = isatty(STDOUT_FILENO);
      std::atomic<size_t> next{0}, done{0}, bytes{0};
      std::mutex io;
      std::vector<std::string> failures;
      MemoryGate gate(options.memory_budget);
      // SIGINT/SIGTERM: the cases being written finish (every file is written through a
      // temporary and renamed whole), no other starts; a second signal removes the
      // temporaries and ends the process.
      install_interrupt_handler();
      auto worker = [&] {
        for (size_t i; !interrupt_signal() && (i = next++) < sel.cases.size();) {
          const auto& c = sel.cases[i];
          try {
            const MemoryGate::Hold hold(gate, host_bytes(*c.op));
            c.op->skip_figures();
            bytes += write_golden_case(c.def, *c.op, out_dir);
          } catch (const std::exception& e) {
            std::lock_guard lock(io);
            failures.push_back(c.def.name + ": " + e.what());
          }
          const size_t d = ++done;
          std::lock_guard lock(io);
          if (tty)
            std::cout << "\r[" << d << "/" << sel.cases.size() << "] " << c.def.name.substr(0, 60) << "\x1b[K"
                      << std::flush;
          else
            std::cout << "golden " << c.def.name << "\n"
                      << std::flush;  // a CI log shows progress as it happens
        }
      };
      std::vector<std::thread> threads;
      for (unsigned t = 1; t < workers; ++t) threads.emplace_back(worker);
      worker();
      for (auto& t : threads) t.join();
      if (tty) std::cout << "\r\x1b[K";
      for (const auto& f : failures) std::cerr << "error: " << f << "\n";
      std::cout.clear();  // the closing line is printed whatever happened to the log before
      if (const int sig = interrupt_signal())
        std::cout << "interrupted by signal " << sig << " after " << done << " of " << sel.cases.size()
                  << " cases\n";
      std::cout << "wrote " << done - failures.size() << " cases (" << bytes / (1024 * 1024.0) << " MiB) to "
                << out_dir << "\n"
                << std::flush;
      exit_code = interrupt_signal()                         ? 128 + interrupt_signal()
                  : !sel.errors.empty() || !failures.empty() ? 2
                                                             : 0;
    });
  });
}

}  // namespace kvbench
