#include "core/json_text.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

namespace kvbench {
namespace {

std::string at(size_t line, size_t column) {
  return "at line " + std::to_string(line) + ", column " + std::to_string(column);
}

bool number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// One pass over the text outside strings: the nesting depth, and every number token read as
// a double. Lines and columns count from 1, columns in bytes (as the parser's do).
void prescan(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') line = line + 1, line_start = i + 1;
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw JsonTextError("arrays and objects nest deeper than " + std::to_string(max_depth) + " levels, " +
                            at(line, i - line_start + 1));
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t end = i;
      while (end < text.size() && number_char(text[end])) ++end;
      const std::string token(text.substr(i, end - i));
      if (std::isinf(std::strtod(token.c_str(), nullptr)))
        throw JsonTextError("the number " + (token.size() > 40 ? token.substr(0, 40) + "..." : token) +
                            " is beyond the range of a double, " + at(line, i - line_start + 1));
      i = end - 1;
    }
  }
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, int max_depth) {
  prescan(text, max_depth);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax errors carry their line and column
    throw JsonTextError(e.what());
  }
}

}  // namespace kvbench
