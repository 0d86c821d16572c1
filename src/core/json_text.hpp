#pragma once
// JSON text from outside (case files, golden manifests), parsed with every failure named at
// its line and column: the parser's syntax errors, a number beyond the range of a double
// (1e400, which the parser reports without a position), and nesting deeper than a limit,
// checked before the recursive parser runs so its stack stays bounded.
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvbench {

// The message says what is wrong and where ("... at line 3, column 17").
class JsonTextError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

nlohmann::json parse_json_text(std::string_view text, int max_depth);

}  // namespace kvbench
