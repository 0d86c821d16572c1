#pragma once
// The portable, counter-based input generator: the same case gives bit-identical inputs on
// every machine (specs/case-format.md "Inputs").
//
// Element i of tensor `name` in a case with seed `seed` is a pure function of the three:
//   key  = splitmix64(seed XOR fnv1a64(name))
//   word = splitmix64(key + (i + 1) * 0x9E3779B97F4A7C15)
// Floats are built from the top 53 bits of `word` in IEEE double arithmetic, never
// through <random> distributions, whose algorithms differ between standard libraries.
#include <bit>
#include <cstdint>
#include <string_view>

namespace kvbench {

uint64_t fnv1a64(std::string_view text);
inline uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class CounterRng {
 public:
  CounterRng(uint64_t seed, std::string_view tensor_name);
  uint64_t word(uint64_t index) const { return splitmix64(key_ + (index + 1) * 0x9E3779B97F4A7C15ull); }
  // The 53 random bits unit() and uniform() are made of.
  uint64_t bits53(uint64_t index) const { return word(index) >> 11; }
  // Uniform in [0, 1) with 53 random bits.
  double unit(uint64_t index) const { return unit_of(bits53(index)); }
  // Uniform in [low, high).
  double uniform(uint64_t index, double low, double high) const {
    return uniform_of(bits53(index), low, high);
  }
  // unit() and uniform() of given bits: both are monotone in them (never decreasing for
  // low <= high), so the least and greatest draw of a set come from its least and
  // greatest bits.
  static double unit_of(uint64_t bits) { return exact_double(bits) * 0x1p-53; }  // exact
  // static_cast<double>(b), made of its two 32-bit halves (each exact through the 2^52
  // exponent trick, one rounding in the sum): no branch, so that loops vectorize.
  static double exact_double(uint64_t b) {
    const double hi = std::bit_cast<double>((b >> 32) | 0x4330000000000000ull) - 0x1p52;
    const double lo = std::bit_cast<double>((b & 0xFFFFFFFFull) | 0x4330000000000000ull) - 0x1p52;
    return hi * 0x1p32 + lo;
  }
  static double uniform_of(uint64_t bits, double low, double high) {
    return low + (high - low) * unit_of(bits);
  }
  // Uniform integer in [low, high] (inclusive).
  int64_t integer(uint64_t index, int64_t low, int64_t high) const;

 private:
  uint64_t key_;
};

}  // namespace kvbench
