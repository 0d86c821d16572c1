// Host tensors (src/core/tensor.hpp) and dtype storage rules (src/core/dtype.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/dtype.hpp"
#include "core/tensor.hpp"

using namespace kvbench;

TEST_CASE("s4 packing: element 2k in the low nibble of byte k, 2k+1 in the high nibble") {
  // By hand (two's complement nibbles): -8 -> 0x8, 7 -> 0x7   => byte 0 = 0x7 << 4 | 0x8 = 0x78
  //                                     -1 -> 0xF, 3 -> 0x3   => byte 1 = 0x3 << 4 | 0xF = 0x3F
  //                                      5 -> 0x5, padding 0  => byte 2 = 0x05
  Tensor t("k", DType::s4, {5}, Role::output);
  const double v[] = {-8, 7, -1, 3, 5};
  for (size_t i = 0; i < 5; ++i) t.set(i, v[i]);
  REQUIRE(t.bytes().size() == 3);
  CHECK(t.bytes() == std::vector<uint8_t>{0x78, 0x3F, 0x05});
  for (size_t i = 0; i < 5; ++i) CHECK(t.get(i) == v[i]);  // get() sign-extends
}

TEST_CASE("packed storage rounds an odd element count up to whole bytes") {
  CHECK(dtype_storage_bytes(DType::s4, 5) == 3);
  CHECK(dtype_storage_bytes(DType::u4, 4) == 2);
  CHECK(dtype_storage_bytes(DType::u4, 1) == 1);
  CHECK(dtype_storage_bytes(DType::f16, 3) == 6);
  CHECK(Tensor("t", DType::u4, {3, 3}, Role::input).bytes().size() == 5);
}

TEST_CASE("u4 holds 0..15 and writing one nibble leaves its neighbour alone") {
  Tensor t("v", DType::u4, {2}, Role::output);
  t.set(1, 15);
  t.set(0, 10);
  CHECK(t.bytes()[0] == 0xFA);
  t.set(0, 0);
  CHECK(t.get(1) == 15);
  CHECK(t.bytes()[0] == 0xF0);
  t.set(1, 3);
  CHECK(t.get(0) == 0);
  CHECK(t.bytes()[0] == 0x30);
  CHECK_THROWS_AS(t.set(0, 16), std::logic_error);
  CHECK_THROWS_AS(t.set(0, -1), std::logic_error);
}

TEST_CASE("i8/u8/i32/i64 store two's complement little-endian bytes") {
  Tensor a("a", DType::i8, {2}, Role::input);
  a.set(0, -128);
  a.set(1, 127);
  CHECK(a.bytes() == std::vector<uint8_t>{0x80, 0x7F});
  CHECK(a.get(0) == -128);
  CHECK(a.get(1) == 127);

  Tensor b("b", DType::u8, {1}, Role::input);
  b.set(0, 255);
  CHECK(b.bytes()[0] == 0xFF);
  CHECK(b.get(0) == 255);

  Tensor c("c", DType::i32, {1}, Role::input);
  c.set(0, -2);
  CHECK(c.bytes() == std::vector<uint8_t>{0xFE, 0xFF, 0xFF, 0xFF});
  CHECK(c.get(0) == -2);
  c.set(0, 2147483647.0);
  CHECK(c.get(0) == 2147483647.0);

  Tensor d("d", DType::i64, {1}, Role::input);
  d.set(0, -std::ldexp(1.0, 40));
  CHECK(d.bits(0) == 0xFFFFFF0000000000ull);
  CHECK(d.get(0) == -std::ldexp(1.0, 40));
  d.set(0, -std::ldexp(1.0, 63));  // INT64_MIN is exactly representable
  CHECK(d.bits(0) == 0x8000000000000000ull);
}

TEST_CASE("set() of an out-of-range or non-integer value on an integer dtype throws") {
  Tensor i8("i8", DType::i8, {1}, Role::input);
  CHECK_THROWS_AS(i8.set(0, 128), std::logic_error);
  CHECK_THROWS_AS(i8.set(0, -129), std::logic_error);
  CHECK_THROWS_AS(i8.set(0, 1.5), std::logic_error);
  CHECK_THROWS_AS(i8.set(0, std::nan("")), std::logic_error);
  CHECK_THROWS_AS(i8.set(0, INFINITY), std::logic_error);
  Tensor u8("u8", DType::u8, {1}, Role::input);
  CHECK_THROWS_AS(u8.set(0, -1), std::logic_error);
  CHECK_THROWS_AS(u8.set(0, 256), std::logic_error);
  Tensor s4("s4", DType::s4, {1}, Role::input);
  CHECK_THROWS_AS(s4.set(0, 8), std::logic_error);
  CHECK_THROWS_AS(s4.set(0, -9), std::logic_error);
  CHECK_THROWS_AS(s4.set(0, 0.5), std::logic_error);
  Tensor i32("i32", DType::i32, {1}, Role::input);
  CHECK_THROWS_AS(i32.set(0, 2147483648.0), std::logic_error);
}

TEST_CASE("i64 set() of 2^63 (one past INT64_MAX) throws") {
  // 2^63 does not fit int64. (double)INT64_MAX rounds up to 2^63, so a range check
  // "v > (double)INT64_MAX" lets it through into an undefined double->int64 conversion.
  Tensor t("i64", DType::i64, {1}, Role::input);
  CHECK_THROWS_AS(t.set(0, std::ldexp(1.0, 63)), std::logic_error);
}

TEST_CASE("f16 tensor set() rounds to nearest even") {
  Tensor t("h", DType::f16, {2}, Role::input);
  t.set(0, 1.0 + std::ldexp(1.0, -11));        // tie between 0x3C00 and 0x3C01 -> even 0x3C00
  t.set(1, 1.0 + 3.0 * std::ldexp(1.0, -11));  // tie between 0x3C01 and 0x3C02 -> even 0x3C02
  CHECK(t.bits(0) == 0x3C00);
  CHECK(t.bits(1) == 0x3C02);
  CHECK(t.get(0) == 1.0);
  CHECK(t.get(1) == 1.0 + std::ldexp(1.0, -9));
  CHECK(t.bytes() == std::vector<uint8_t>{0x00, 0x3C, 0x02, 0x3C});
}

TEST_CASE("shape_numel and row-major offset()") {
  CHECK(shape_numel({2, 3, 4}) == 24);
  CHECK(shape_numel({}) == 1);
  CHECK(shape_numel({3, 0}) == 0);
  Tensor t("t", DType::f32, {2, 3, 4}, Role::input);
  CHECK(t.numel() == 24);
  CHECK(t.bytes().size() == 96);
  CHECK(t.offset({0, 0, 0}) == 0);
  CHECK(t.offset({0, 1, 0}) == 4);
  CHECK(t.offset({1, 2, 3}) == 1 * 12 + 2 * 4 + 3);
  CHECK_THROWS_AS(t.offset({1, 2}), std::logic_error);
}
