#include "report/name_column.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace kvbench {

std::vector<std::string> wrap_name(const std::string& name, size_t room) {
  room = std::max<size_t>(room, 1);
  std::vector<std::string> pieces;
  size_t start = 0;
  while (name.size() - start > room) {
    size_t end = start + room;
    // Break after the last ',' or '[' that leaves something on this line.
    const size_t sep = name.find_last_of(",[", end - 1);
    if (sep != std::string::npos && sep >= start) end = sep + 1;
    pieces.push_back(name.substr(start, end - start));
    start = end;
  }
  pieces.push_back(name.substr(start));
  return pieces;
}

std::string progress_line(size_t index, size_t total, const std::string& name, size_t columns) {
  std::string line(1, '[');  // (not "[" + std::string: GCC 12 warns -Wrestrict on it falsely)
  line += std::to_string(index + 1) + "/" + std::to_string(total) + "] " + name;
  if (line.size() >= columns) line = line.substr(0, columns > 4 ? columns - 4 : 0) + "...";
  return line;
}

std::string NameColumn::pad(const std::string& text) const {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string NameColumn::cell(const std::string& name) const {
  if (name.size() <= width) return pad(name);
  std::string margin(indent + 1, ' ');
  margin[0] = '\n';  // (not "\n" + std::string(...): GCC 12 warns -Wrestrict on it falsely)
  std::string out;
  const size_t room = wrap > indent ? wrap - indent : 0;
  const std::vector<std::string> pieces = room ? wrap_name(name, room) : std::vector<std::string>{name};
  for (size_t i = 0; i < pieces.size(); ++i) out += (i ? margin : "") + pieces[i];
  return out + margin + std::string(width, ' ');
}

NameColumn name_column(const std::vector<std::string>& names, size_t indent, size_t fixed,
                       std::optional<size_t> terminal) {
  size_t longest = 0;
  for (const auto& n : names) longest = std::max(longest, n.size());
  NameColumn c{.indent = indent};
  if (terminal) {
    c.wrap = *terminal;
    const size_t room = *terminal > indent + fixed ? *terminal - indent - fixed : 0;
    c.width = std::min(longest, room);
  } else {
    c.width = std::min(longest, kLogNameWidth);
  }
  c.width = std::max<size_t>(c.width, 4);  // at least the header "case"
  return c;
}

std::optional<size_t> terminal_columns() {
  if (!isatty(STDOUT_FILENO)) return std::nullopt;
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* env = std::getenv("COLUMNS")) {
    const long v = std::strtol(env, nullptr, 10);
    if (v > 0) return static_cast<size_t>(v);
  }
  return 80;
}

}  // namespace kvbench
