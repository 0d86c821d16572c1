#include "core/rng.hpp"

#include <cmath>

namespace kvbench {

uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

CounterRng::CounterRng(uint64_t seed, std::string_view tensor_name)
    : key_(splitmix64(seed ^ fnv1a64(tensor_name))) {}

uint64_t CounterRng::word(uint64_t index) const {
  return splitmix64(key_ + (index + 1) * 0x9E3779B97F4A7C15ull);
}

double CounterRng::unit(uint64_t index) const {
  return std::ldexp(static_cast<double>(word(index) >> 11), -53);
}

double CounterRng::uniform(uint64_t index, double low, double high) const {
  return low + (high - low) * unit(index);
}

int64_t CounterRng::integer(uint64_t index, int64_t low, int64_t high) const {
  const uint64_t span = static_cast<uint64_t>(high - low) + 1;
  return low + static_cast<int64_t>(span == 0 ? word(index) : word(index) % span);
}

}  // namespace kvbench
