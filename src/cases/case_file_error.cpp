#include "cases/case_file_error.hpp"

namespace kvbench {

std::string CaseFileError::to_string() const {
  std::string s = file;
  if (!pointer.empty()) s += ": " + pointer;
  if (!case_name.empty()) s += " (case " + case_name + ")";
  return s + ": " + message;
}

}  // namespace kvbench
