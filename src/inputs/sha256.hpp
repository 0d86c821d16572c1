#pragma once
// SHA-256 (OpenSSL's libcrypto) of the files a case takes inputs from: the golden's manifest
// records each, so a golden says which bytes it was made from, in the form `sha256sum` and
// Python's hashlib print (specs/case-format.md "Inputs from files").
#include <cstdint>
#include <span>
#include <string>

namespace kvbench {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::span<const uint8_t> bytes);
  // 64 lowercase hex digits; the object takes no more data after it.
  std::string hex();

 private:
  void* ctx_;
};

std::string sha256_hex(std::span<const uint8_t> bytes);

}  // namespace kvbench
