#pragma once
// Errors that carry where they come from, so a user sees the file and the field at fault.
#include <stdexcept>
#include <string>

namespace kvbench {

// A case file that breaks the schema or an operator's constraints.
// `pointer` is the RFC 6901 JSON pointer of the offending field ("" for the whole document).
class CaseError : public std::runtime_error {
 public:
  CaseError(std::string pointer, const std::string& message)
      : std::runtime_error(message), pointer_(std::move(pointer)) {}
  const std::string& pointer() const { return pointer_; }

 private:
  std::string pointer_;
};

// A case that cannot run on the chosen device (a missing feature, a buffer too large).
class SkipCase : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kvbench
