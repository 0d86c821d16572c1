#pragma once
// --filter: a POSIX extended regular expression searched in each expanded case name.
// glibc's matcher runs in time polynomial in the name's length for any pattern (no
// backtracking blow-up like std::regex on `(a*)*b`), so no filter can hang a run.
#include <memory>
#include <string>

namespace kvbench {

class NameFilter {
 public:
  // "" keeps every name. Throws std::invalid_argument naming the problem for a malformed pattern.
  explicit NameFilter(const std::string& pattern);
  ~NameFilter();
  NameFilter(NameFilter&&) noexcept;
  bool matches(const std::string& name) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> re_;
};

}  // namespace kvbench
