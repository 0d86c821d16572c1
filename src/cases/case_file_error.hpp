#pragma once
// A file that cannot be used (a case file, a golden manifest), with the JSON pointer at fault:
// what every report lists as invalid (exit 2).
#include <string>

namespace kvbench {

struct CaseFileError {
  std::string file;
  std::string pointer;  // JSON pointer of the field at fault ("" for the file as a whole)
  std::string message;
  std::string case_name;  // the expanded case, when the error is specific to one
  std::string to_string() const;
};

}  // namespace kvbench
