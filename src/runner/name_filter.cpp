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
  auto c = std::make_unique<Compiled>();
  if (const int err = regcomp(&c->re, pattern.c_str(), REG_EXTENDED | REG_NOSUB)) {
    char buf[256];
    regerror(err, &c->re, buf, sizeof buf);
    c.release();  // regcomp failed: nothing to free
    throw std::invalid_argument(buf);
  }
  re_ = std::move(c);
}

NameFilter::~NameFilter() = default;
NameFilter::NameFilter(NameFilter&&) noexcept = default;

bool NameFilter::matches(const std::string& name) const {
  return !re_ || regexec(&re_->re, name.c_str(), 0, nullptr, 0) == 0;
}

}  // namespace kvbench
