// The counter-based generator (src/core/rng.hpp) is pinned two ways, so that any change
// to it fails: against an independent implementation written here from the algorithm in
// rng.hpp's header comment and the published constants, and against literal words.
#include <doctest/doctest.h>

#include <vector>

#include <cmath>
#include <cstdint>
#include <string_view>

#include "core/rng.hpp"

using namespace kvbench;

namespace {

// FNV-1a 64 (Fowler/Noll/Vo): offset basis 14695981039346656037, prime 2^40 + 2^8 + 0xb3.
uint64_t my_fnv1a64(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * ((1ull << 40) + (1ull << 8) + 0xb3);
  return h;
}

// splitmix64 (Steele, Lea, Flood 2014; Vigna's reference): golden-gamma increment, then the
// mix13 finalizer (shifts 30, 27, 31).
uint64_t my_splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// rng.hpp: key = splitmix64(seed ^ fnv1a64(name)); word = splitmix64(key + (i+1) * gamma).
uint64_t my_word(uint64_t seed, std::string_view name, uint64_t i) {
  const uint64_t key = my_splitmix64(seed ^ my_fnv1a64(name));
  return my_splitmix64(key + (i + 1) * 0x9e3779b97f4a7c15ull);
}

}  // namespace

TEST_CASE("fnv1a64 matches the published FNV-1a test vectors") {
  CHECK(fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(my_fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(my_fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a64("k_cache") == my_fnv1a64("k_cache"));
}

TEST_CASE("splitmix64 matches an independent implementation") {
  for (uint64_t z : {0ull, 1ull, 0xffffffffffffffffull, 0x123456789abcdef0ull})
    CHECK(splitmix64(z) == my_splitmix64(z));
}

TEST_CASE("CounterRng(1, \"x\") words are pinned") {
  // Printed once from my_word() (and cross-checked with a Python transcription), then pasted.
  const CounterRng r(1, "x");
  CHECK(my_word(1, "x", 0) == 0x72f3c68dd7ed17c6ull);
  CHECK(my_word(1, "x", 1) == 0x8d817c2ac0764c2bull);
  CHECK(my_word(1, "x", 1000000) == 0x24144dea5933b291ull);
  CHECK(r.word(0) == 0x72f3c68dd7ed17c6ull);
  CHECK(r.word(1) == 0x8d817c2ac0764c2bull);
  CHECK(r.word(1000000) == 0x24144dea5933b291ull);
  for (uint64_t i = 0; i < 64; ++i) CHECK(r.word(i * 977) == my_word(1, "x", i * 977));
}

TEST_CASE("unit() is (word >> 11) * 2^-53, in [0, 1)") {
  const CounterRng r(42, "q");
  for (uint64_t i = 0; i < 1000; ++i) {
    const double u = r.unit(i);
    CHECK(u == static_cast<double>(my_word(42, "q", i) >> 11) * 0x1p-53);
    CHECK(u >= 0.0);
    CHECK(u < 1.0);
  }
}

TEST_CASE("exact_double(b) is static_cast<double>(b) for every 64-bit b, including those it must round") {
  // The halves' boundaries, the largest exact integers, and values that need a rounding
  // (above 2^53, where ties go to even), then random words.
  std::vector<uint64_t> bs{0,
                           1,
                           0xFFFFFFFFull,
                           0x100000000ull,
                           (1ull << 53) - 1,
                           1ull << 53,
                           (1ull << 53) + 1,
                           (1ull << 53) + 3,
                           0x8000000000000400ull,
                           0x8000000000000401ull,
                           ~0ull};
  for (uint64_t i = 0; i < 100000; ++i) bs.push_back(splitmix64(i));
  for (const uint64_t b : bs) {
    CAPTURE(b);
    CHECK(CounterRng::exact_double(b) == static_cast<double>(b));
  }
}

TEST_CASE("integer(i, lo, hi) stays in [lo, hi] and reaches both ends") {
  const CounterRng r(7, "idx");
  bool saw_lo = false, saw_hi = false;
  for (uint64_t i = 0; i < 2000; ++i) {
    const int64_t v = r.integer(i, -3, 4);
    CHECK(v >= -3);
    CHECK(v <= 4);
    saw_lo = saw_lo || v == -3;
    saw_hi = saw_hi || v == 4;
  }
  CHECK(saw_lo);
  CHECK(saw_hi);
  CHECK(r.integer(5, 9, 9) == 9);
}

TEST_CASE("different names or seeds give different streams") {
  const CounterRng a(1, "k"), b(1, "v"), c(2, "k");
  int same_ab = 0, same_ac = 0;
  for (uint64_t i = 0; i < 100; ++i) {
    same_ab += a.word(i) == b.word(i);
    same_ac += a.word(i) == c.word(i);
  }
  CHECK(same_ab == 0);
  CHECK(same_ac == 0);
}
