#pragma once
// The case-selection flags shared by run, list and golden: --filter, --shard, --slow.
#include <iostream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "runner/case_selection.hpp"

namespace kvbench {

struct SelectionFlags {
  std::string filter;
  std::string shard = "1/1";
  std::string slow = "exclude";

  void add_to(CLI::App* cmd) {
    cmd->add_option("--filter", filter, "Keep only cases whose expanded name matches this regex");
    cmd->add_option("--shard", shard, "Keep shard K of N (K/N, 1-based): N jobs with K=1..N cover every case once")
        ->check([](const std::string& v) { return parse_shard(v) ? "" : "--shard takes K/N with 1 <= K <= N"; });
    cmd->add_option("--slow", slow, "Cases of files marked slow: exclude (default), include, or only")
        ->check(CLI::IsMember({"exclude", "include", "only"}));
  }

  // The selected cases, or nullopt (after printing the error) for a malformed --filter.
  std::optional<Selection> select(const std::vector<std::string>& paths) const {
    try {
      return select_cases(paths, options());
    } catch (const std::regex_error& e) {
      std::cerr << "error: --filter is not a valid regex: " << e.what() << "\n";
      return std::nullopt;
    }
  }

  SelectOptions options() const {
    SelectOptions o;
    o.filter = filter;
    o.shard = *parse_shard(shard);
    o.slow = slow == "include" ? SlowMode::include : slow == "only" ? SlowMode::only : SlowMode::exclude;
    return o;
  }
};

}  // namespace kvbench
