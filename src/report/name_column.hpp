#pragma once
// The case-name column of the terminal tables (run, check, bench). Names are never cut:
// in a log every name is whole, and on a terminal every name fits the terminal's width.
// A name longer than the column goes on its own line (wrapped at the terminal's width on a
// terminal), and the row's figures follow on the next line under their headers.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

// Names up to this long share their row with the figures in a log; longer ones get a line.
inline constexpr size_t kLogNameWidth = 120;

struct NameColumn {
  size_t indent = 0;  // characters before the column on every row (counter, status)
  size_t width = 4;   // characters of the column itself
  size_t wrap = 0;    // the terminal's width, to wrap a long name at; 0 in a log (never)

  // `name` padded to the column, or the name on its own line(s) followed by a new line
  // indented to just past the column.
  std::string cell(const std::string& name) const;
  // `text` (a header) padded to the column.
  std::string pad(const std::string& text) const;
};

// `fixed`: the characters of a row after the name column; `terminal`: the terminal's
// width, or nullopt when the output is not a terminal.
NameColumn name_column(const std::vector<std::string>& names, size_t indent, size_t fixed,
                       std::optional<size_t> terminal);

// The width of the terminal stdout is, or nullopt when stdout is not a terminal.
std::optional<size_t> terminal_columns();

// "[3/120] name" within `columns` characters (cut with "..."): a progress line that \r can
// return to the start of, which it cannot once the terminal has wrapped it.
std::string progress_line(size_t index, size_t total, const std::string& name, size_t columns);

// `name` cut into pieces of at most `room` characters, each ending, where the name allows,
// just after a ',' or '[' (so a sweep's parameters are not split).
std::vector<std::string> wrap_name(const std::string& name, size_t room);

}  // namespace kvbench
