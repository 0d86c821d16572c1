#pragma once
// A string as one POSIX shell word: in single quotes, each ' written as '\''.
#include <string>

namespace kvbench {

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace kvbench
