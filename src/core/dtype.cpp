#include "core/dtype.hpp"

#include <array>
#include <stdexcept>

namespace kvbench {
namespace {
struct Info {
  DType type;
  std::string_view name;
  int bits;
  bool is_float;
  int64_t min, max;
};
constexpr std::array<Info, 18> kInfo{{
    {DType::f32, "f32", 32, true, 0, 0},
    {DType::f16, "f16", 16, true, 0, 0},
    {DType::bf16, "bf16", 16, true, 0, 0},
    {DType::i8, "i8", 8, false, -128, 127},
    {DType::u8, "u8", 8, false, 0, 255},
    {DType::s4, "s4", 4, false, -8, 7},
    {DType::u4, "u4", 4, false, 0, 15},
    {DType::i32, "i32", 32, false, INT32_MIN, INT32_MAX},
    {DType::i64, "i64", 64, false, INT64_MIN, INT64_MAX},
    {DType::boolean, "bool", 8, false, 0, 1},
    {DType::f4e2m1, "f4e2m1", 4, true, 0, 0},
    {DType::f4e1m2, "f4e1m2", 4, true, 0, 0},
    {DType::f8e8m0, "f8e8m0", 8, true, 0, 0},
    {DType::f8e4m3fn, "f8e4m3fn", 8, true, 0, 0},
    {DType::f8e5m2, "f8e5m2", 8, true, 0, 0},
    {DType::hifloat8, "hifloat8", 8, true, 0, 0},
    {DType::f6e2m3, "f6e2m3", 8, true, 0, 0},
    {DType::f6e3m2, "f6e3m2", 8, true, 0, 0},
}};
const Info& info(DType t) { return kInfo[static_cast<size_t>(t)]; }
static_assert(
    [] {
      for (size_t i = 0; i < kInfo.size(); ++i)
        if (static_cast<size_t>(kInfo[i].type) != i) return false;
      return true;
    }(),
    "kInfo lists the dtypes in the order of their codes");
constexpr auto kAll = [] {
  std::array<DType, kInfo.size()> all{};
  for (size_t i = 0; i < kInfo.size(); ++i) all[i] = kInfo[i].type;
  return all;
}();
}  // namespace

std::span<const DType> all_dtypes() { return kAll; }

std::string_view dtype_name(DType t) { return info(t).name; }
std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  return std::nullopt;
}
int dtype_bits(DType t) { return info(t).bits; }
std::optional<Fp8> dtype_fp8(DType t) {
  if (t == DType::f8e4m3fn) return Fp8::e4m3fn;
  if (t == DType::f8e5m2) return Fp8::e5m2;
  return std::nullopt;
}
bool dtype_is_float(DType t) { return info(t).is_float; }
size_t dtype_storage_bytes(DType t, size_t count) { return (count * dtype_bits(t) + 7) / 8; }
int64_t dtype_int_min(DType t) {
  if (dtype_is_float(t)) throw std::logic_error("dtype_int_min of a float type");
  return info(t).min;
}
int64_t dtype_int_max(DType t) {
  if (dtype_is_float(t)) throw std::logic_error("dtype_int_max of a float type");
  return info(t).max;
}

}  // namespace kvbench
