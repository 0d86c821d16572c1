#pragma once
// The case-selection flags shared by run, bench, list and golden: --filter, --op, --shard,
// --slow, --failed-from, --cases-from, --allow-empty, the limits of one case file (--memory-budget,
// --max-cases) and where its input files may be (--allow-outside-paths).
#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ops/signature.hpp"
#include "runner/case_selection.hpp"

namespace kvbench {

// "8G", "512M", "1048576": bytes, with an optional K/M/G/T suffix (powers of 1024).
inline std::optional<uint64_t> parse_bytes(const std::string& text) {
  size_t used = 0;
  uint64_t v = 0;
  try {
    v = std::stoull(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string suffix = text.substr(used);
  int shift = 0;
  if (suffix == "K" || suffix == "KiB")
    shift = 10;
  else if (suffix == "M" || suffix == "MiB")
    shift = 20;
  else if (suffix == "G" || suffix == "GiB")
    shift = 30;
  else if (suffix == "T" || suffix == "TiB")
    shift = 40;
  else if (!suffix.empty())
    return std::nullopt;
  if (v > (UINT64_MAX >> shift)) return std::nullopt;
  return v << shift;
}

struct SelectionFlags {
  std::vector<std::string> filters, ops;
  bool allow_empty = false;
  std::string shard = "1/1";
  std::string slow = "exclude";
  std::string memory;
  std::string failed_from;
  std::string cases_from;
  uint64_t max_cases = 0;
  bool outside_paths = false;

  void add_to(CLI::App* cmd) {
    cmd->add_option(
           "--filter", filters,
           "Keep only cases whose expanded name matches this POSIX extended regex (repeatable: any matches)")
        ->allow_extra_args(false);
    cmd->add_option("--op", ops, "Keep only cases of this operator id (repeatable; see `kvbench ops`)")
        ->allow_extra_args(false);
    cmd->add_option("--failed-from", failed_from,
                    "Keep only the cases that failed or were invalid in this earlier `run --json` report");
    cmd->add_option(
        "--cases-from", cases_from,
        "Keep only the cases named in this file, one whole name a line ('#' comments); a name no case "
        "file expands to is an error");
    cmd->add_flag("--allow-empty", allow_empty, "Accept a selection of no case (otherwise an error, exit 2)");
    cmd->add_option("--shard", shard,
                    "Keep shard K of N (K/N, 1-based): N jobs with K=1..N cover every case once")
        ->check(
            [](const std::string& v) { return parse_shard(v) ? "" : "--shard takes K/N with 1 <= K <= N"; });
    cmd->add_option("--slow", slow, "Cases of files marked slow: exclude (default), include, or only")
        ->check(CLI::IsMember({"exclude", "include", "only"}));
    cmd->add_option("--memory-budget", memory,
                    "Host memory one case may take, e.g. 8G (default: half the physical memory); a larger "
                    "case is invalid")
        ->check([](const std::string& v) {
          return parse_bytes(v) ? "" : "--memory-budget takes bytes, e.g. 8G or 512M";
        });
    cmd->add_option("--max-cases", max_cases, "Most cases one file's sweep may expand to (default 10000)")
        ->check(CLI::PositiveNumber);
    cmd->add_flag(
        "--allow-outside-paths", outside_paths,
        "Let case files take inputs from files outside their own folder tree (by default a case file reads "
        "only files beside it or below it)");
  }

  // The limits of the flags (--memory-budget, --max-cases, --allow-outside-paths), and
  // `reference_threads` unless it is 0 (then the hardware threads).
  RunOptions run_options(unsigned reference_threads = 0) const {
    RunOptions r;
    if (!memory.empty()) r.memory_budget = *parse_bytes(memory);
    if (max_cases) r.max_cases_per_file = max_cases;
    r.allow_outside_paths = outside_paths;
    if (reference_threads) r.reference_threads = reference_threads;
    return r;
  }

  // The selected cases, loaded and instantiated under `run`, or nullopt (after printing the
  // error) for a malformed --filter, an unknown --op or an empty selection without
  // --allow-empty.
  std::optional<Selection> select(const std::vector<std::string>& paths, const RunOptions& run) const {
    try {
      SelectOptions o = options();
      if (!failed_from.empty()) o.rerun = failed_cases_from(failed_from);
      if (!cases_from.empty()) o.named = named_cases_from(cases_from);
      Selection s = select_cases(paths, o, run);
      // A typo in a CI filter must not turn the job green by selecting nothing.
      if (s.cases.empty() && s.errors.empty() && !allow_empty) {
        if (o.rerun && o.rerun->names.empty() && o.rerun->files.empty())
          std::cerr << "error: no case selected: " << failed_from << " lists no failed or invalid case "
                    << "(--allow-empty accepts an empty selection)\n";
        else
          std::cerr << "error: no case selected (check the paths, --filter, --op, --shard, --slow and "
                       "--failed-from; "
                       "--allow-empty accepts an empty selection)\n";
        return std::nullopt;
      }
      return s;
    } catch (const std::invalid_argument& e) {
      std::cerr << "error: " << e.what() << "\n";
      return std::nullopt;
    }
  }

  // A command's callback on its selection: `command` runs on the selected cases (and sets
  // `exit_code` itself), or, when nothing could be selected, exit_code is 2 (the error printed).
  void with_selection(const std::vector<std::string>& paths, const RunOptions& run, int& exit_code,
                      const std::function<void(Selection&)>& command) const {
    if (auto selected = select(paths, run))
      command(*selected);
    else
      exit_code = 2;
  }

  SelectOptions options() const {
    SelectOptions o;
    o.filters = filters;
    o.ops = ops;
    o.shard = *parse_shard(shard);
    o.slow = slow == "include" ? SlowMode::include : slow == "only" ? SlowMode::only : SlowMode::exclude;
    return o;
  }
};

}  // namespace kvbench
