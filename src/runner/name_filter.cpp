#include "runner/name_filter.hpp"

#include <regex.h>

#include <stdexcept>

namespace kvbench {

struct NameFilter::Compiled {
  regex_t re;
  ~Compiled() { regfree(&re); }
};

NameFilter::NameFilter(const std::string& pattern) {
  if (pattern.empty()) return;
  // Compiled apart, so that a failed regcomp (nothing to regfree) leaks no Compiled.
  regex_t re;
  if (const int err = regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB)) {
    char buf[256];
    regerror(err, &re, buf, sizeof buf);
    throw std::invalid_argument(buf);
  }
  re_ = std::make_unique<Compiled>();
  re_->re = re;  // the Compiled now owns it and regfrees it once
}

NameFilter::~NameFilter() = default;
NameFilter::NameFilter(NameFilter&&) noexcept = default;

bool NameFilter::matches(const std::string& name) const {
  return !re_ || regexec(&re_->re, name.c_str(), 0, nullptr, 0) == 0;
}

}  // namespace kvbench
