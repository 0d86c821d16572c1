#include "core/tensor.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/float_format.hpp"
#include "core/hifloat8.hpp"

namespace kvbench {

const char* role_name(Role r) {
  switch (r) {
    case Role::input: return "input";
    case Role::output: return "output";
    case Role::inplace: return "inplace";
  }
  return "?";
}

size_t shape_numel(const Shape& shape) {
  size_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, static_cast<size_t>(d), &n))
      throw std::length_error("shape " + shape_string(shape) + " has no representable element count");
  }
  return n;
}

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

Tensor::Tensor(std::string name, DType dtype, Shape shape, Role role)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)), role_(role) {
  for (int64_t d : shape_)
    if (d < 0) throw std::invalid_argument("negative dimension in tensor " + name_);
  numel_ = shape_numel(shape_);
  bytes_.assign(dtype_storage_bytes(dtype_, numel_), 0);
}

Tensor Tensor::unallocated(std::string name, DType dtype, Shape shape, Role role) {
  Tensor t;
  t.name_ = std::move(name);
  t.dtype_ = dtype;
  t.role_ = role;
  t.numel_ = shape_numel(shape);
  t.shape_ = std::move(shape);
  return t;
}

uint64_t Tensor::bits(size_t i) const {
  const uint8_t* p = bytes_.data();
  switch (dtype_bits(dtype_)) {
    case 4: return (p[i / 2] >> ((i % 2) * 4)) & 0xFu;
    case 8: return p[i];
    case 16: {
      uint16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      return v;
    }
    case 32: {
      uint32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      return v;
    }
  }
}

void Tensor::set_bits(size_t i, uint64_t v) {
  uint8_t* p = bytes_.data();
  switch (dtype_bits(dtype_)) {
    case 4: {
      const int shift = (i % 2) * 4;
      p[i / 2] = static_cast<uint8_t>((p[i / 2] & ~(0xFu << shift)) | ((v & 0xFu) << shift));
      break;
    }
    case 8: p[i] = static_cast<uint8_t>(v); break;
    case 16: {
      uint16_t w = static_cast<uint16_t>(v);
      std::memcpy(p + 2 * i, &w, 2);
      break;
    }
    case 32: {
      uint32_t w = static_cast<uint32_t>(v);
      std::memcpy(p + 4 * i, &w, 4);
      break;
    }
    default: std::memcpy(p + 8 * i, &v, 8); break;
  }
}

double Tensor::get(size_t i) const {
  const uint64_t b = bits(i);
  switch (dtype_) {
    case DType::f32: return f32_bits_to_double(static_cast<uint32_t>(b));
    case DType::f16: return f16_bits_to_double(static_cast<uint16_t>(b));
    case DType::bf16: return bf16_bits_to_double(static_cast<uint16_t>(b));
    case DType::i8: return static_cast<int8_t>(b);
    case DType::u8: return static_cast<double>(b);
    case DType::s4: return (b & 8u) ? static_cast<double>(b) - 16.0 : static_cast<double>(b);
    case DType::u4: return static_cast<double>(b);
    case DType::i32: return static_cast<int32_t>(b);
    case DType::i64: return static_cast<double>(static_cast<int64_t>(b));
    case DType::boolean: return static_cast<double>(b);
    case DType::f4e2m1: return fp4_value(false, static_cast<unsigned>(b));
    case DType::f4e1m2: return fp4_value(true, static_cast<unsigned>(b));
    case DType::f8e8m0: return e8m0_value(static_cast<unsigned>(b));
    case DType::f8e4m3fn: return fp8_value(Fp8::e4m3fn, static_cast<unsigned>(b));
    case DType::f8e5m2: return fp8_value(Fp8::e5m2, static_cast<unsigned>(b));
    case DType::hifloat8: return hif8_values()[static_cast<uint8_t>(b)];
    case DType::f6e2m3: return small_float_value(SmallFloat::e2m3, static_cast<unsigned>(b));
    case DType::f6e3m2: return small_float_value(SmallFloat::e3m2, static_cast<unsigned>(b));
  }
  return 0;
}

void Tensor::set(size_t i, double v) {
  switch (dtype_) {
    case DType::f32: set_bits(i, f32_bits_from_double(v)); return;
    case DType::f16: set_bits(i, f16_bits_from_double(v)); return;
    case DType::bf16: set_bits(i, bf16_bits_from_double(v)); return;
    case DType::f4e2m1: set_bits(i, fp4_code(false, v)); return;
    case DType::f4e1m2: set_bits(i, fp4_code(true, v)); return;
    case DType::f8e8m0: set_bits(i, e8m0_code(v)); return;
    // torch's `.to(float8_*)`: past the largest value, E4M3FN NaN and E5M2 infinity. A
    // saturating writer clamps first (fp8_code with Fp8Overflow::saturate).
    case DType::f8e4m3fn: set_bits(i, fp8_code(Fp8::e4m3fn, v)); return;
    case DType::f8e5m2: set_bits(i, fp8_code(Fp8::e5m2, v)); return;
    // HiF8 by TA rounding, past the largest value +-Inf (specs/hifloat8.md); a saturating
    // writer calls hif8_encode with Hif8Overflow::saturate.
    case DType::hifloat8: set_bits(i, hif8_encode(v)); return;
    case DType::f6e2m3: set_bits(i, small_float_code(SmallFloat::e2m3, v)); return;
    case DType::f6e3m2: set_bits(i, small_float_code(SmallFloat::e3m2, v)); return;
    default: break;
  }
  // The upper bound is exclusive at max + 1, which is exact in double for every integer
  // dtype (the max itself is not for i64: INT64_MAX rounds up to 2^63, and so does + 1).
  const double above_max = static_cast<double>(dtype_int_max(dtype_)) + 1.0;
  if (!(v >= static_cast<double>(dtype_int_min(dtype_)) && v < above_max) || v != std::floor(v))
    throw std::logic_error("value " + std::to_string(v) + " does not fit " + std::string(dtype_name(dtype_)) +
                           " in tensor " + name_);
  set_bits(i, static_cast<uint64_t>(static_cast<int64_t>(v)));
}

namespace {

template <typename Bits, typename Convert>
void widen_range(const uint8_t* p, size_t begin, size_t n, double* out, Convert convert) {
  for (size_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, p + (begin + i) * sizeof(Bits), sizeof(Bits));
    out[i] = convert(b);
  }
}

template <typename Bits, typename Convert>
void narrow_range(uint8_t* p, size_t begin, size_t n, const double* in, Convert convert) {
  for (size_t i = 0; i < n; ++i) {
    const Bits b = convert(in[i]);
    std::memcpy(p + (begin + i) * sizeof(Bits), &b, sizeof(Bits));
  }
}

}  // namespace

void Tensor::get_range(size_t begin, size_t n, double* out) const {
  const uint8_t* p = bytes_.data();
  switch (dtype_) {
    case DType::f32: return widen_range<uint32_t>(p, begin, n, out, f32_bits_to_double);
    case DType::f16: return widen_range<uint16_t>(p, begin, n, out, f16_bits_to_double);
    case DType::bf16: return widen_range<uint16_t>(p, begin, n, out, bf16_bits_to_double);
    case DType::i8:
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<int8_t>(p[begin + i]);
      return;
    case DType::u8:
    case DType::boolean:
      for (size_t i = 0; i < n; ++i) out[i] = p[begin + i];
      return;
    case DType::f8e4m3fn: return e4m3fn_values(p + begin, n, out);
    case DType::f8e5m2: {
      const std::array<double, 256>& value = fp8_values(Fp8::e5m2);
      for (size_t i = 0; i < n; ++i) out[i] = value[p[begin + i]];
      return;
    }
    case DType::hifloat8: {
      const std::array<double, 256>& value = hif8_values();
      for (size_t i = 0; i < n; ++i) out[i] = value[p[begin + i]];
      return;
    }
    case DType::s4:
    case DType::u4:
      for (size_t i = 0; i < n; ++i) {
        const unsigned nibble = (p[(begin + i) / 2] >> ((begin + i) % 2 * 4)) & 0xFu;
        out[i] = dtype_ == DType::s4 && (nibble & 8u) ? static_cast<double>(nibble) - 16.0
                                                      : static_cast<double>(nibble);
      }
      return;
    default:
      for (size_t i = 0; i < n; ++i) out[i] = get(begin + i);
  }
}

void Tensor::set_range(size_t begin, size_t n, const double* in) {
  uint8_t* p = bytes_.data();
  switch (dtype_) {
    case DType::f32: return narrow_range<uint32_t>(p, begin, n, in, f32_bits_from_double);
    case DType::f16: return narrow_range<uint16_t>(p, begin, n, in, f16_bits_from_double);
    case DType::bf16: return narrow_range<uint16_t>(p, begin, n, in, bf16_bits_from_double);
    case DType::f8e4m3fn:
    case DType::f8e5m2: {
      // torch's `.to(float8_*)` (no saturation), as set() does; the format dispatched once.
      if (dtype_ == DType::f8e4m3fn)
        for (size_t i = 0; i < n; ++i)
          p[begin + i] = static_cast<uint8_t>(float_format_detail::fp8_code_bits<3, 7, true>(in[i], false));
      else
        for (size_t i = 0; i < n; ++i)
          p[begin + i] = static_cast<uint8_t>(float_format_detail::fp8_code_bits<2, 15, false>(in[i], false));
      return;
    }
    case DType::i8:
    case DType::u8:
    case DType::s4:
    case DType::u4:
    case DType::boolean:
    case DType::i32: {
      // The integer codes: in range and integral, or set() names the bad value.
      const auto lo = static_cast<double>(dtype_int_min(dtype_)),
                 hi = static_cast<double>(dtype_int_max(dtype_));
      const int bits = dtype_bits(dtype_);
      for (size_t i = 0; i < n; ++i) {
        const double v = in[i];
        // (An int64 round trip tests integrality without a libm call: v is within [lo, hi].)
        if (!(v >= lo && v <= hi) || static_cast<double>(static_cast<int64_t>(v)) != v)
          set(begin + i, v);  // throws
        const auto code = static_cast<int64_t>(v);
        if (bits == 8) {
          p[begin + i] = static_cast<uint8_t>(code);
        } else if (bits == 32) {
          const auto w = static_cast<int32_t>(code);
          std::memcpy(p + (begin + i) * 4, &w, 4);
        } else {
          const size_t at = (begin + i) / 2, shift = (begin + i) % 2 * 4;
          p[at] = static_cast<uint8_t>((p[at] & ~(0xFu << shift)) |
                                       ((static_cast<uint32_t>(code) & 0xFu) << shift));
        }
      }
      return;
    }
    default:
      for (size_t i = 0; i < n; ++i) set(begin + i, in[i]);
  }
}

size_t Tensor::offset(std::initializer_list<int64_t> index) const {
  if (index.size() != shape_.size()) throw std::logic_error("rank mismatch indexing " + name_);
  size_t off = 0;
  size_t k = 0;
  for (int64_t x : index) off = off * static_cast<size_t>(shape_[k++]) + static_cast<size_t>(x);
  return off;
}

}  // namespace kvbench
