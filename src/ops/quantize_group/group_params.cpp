#include "ops/quantize_group/group_params.hpp"

#include <array>

#include "core/hifloat8.hpp"

namespace kvbench {
namespace {

struct FormatInfo {
  const char* name;
  CodeFamily family;
  DType code;
  int64_t block;  // the group size the format fixes (0: any)
};
constexpr std::array<FormatInfo, 11> kFormats{{
    {"int", CodeFamily::integer, DType::i8, 0},
    {"f8e4m3fn", CodeFamily::float8, DType::f8e4m3fn, 0},
    {"f8e5m2", CodeFamily::float8, DType::f8e5m2, 0},
    {"hif8", CodeFamily::float8, DType::hifloat8, 0},
    {"mxfp8_e4m3", CodeFamily::mx, DType::f8e4m3fn, 32},
    {"mxfp8_e5m2", CodeFamily::mx, DType::f8e5m2, 32},
    {"mxfp6_e2m3", CodeFamily::mx, DType::f6e2m3, 32},
    {"mxfp6_e3m2", CodeFamily::mx, DType::f6e3m2, 32},
    {"mxfp4_e2m1", CodeFamily::mx, DType::f4e2m1, 32},
    {"mxint8", CodeFamily::mx, DType::i8, 32},
    {"nvfp4", CodeFamily::nvfp4, DType::f4e2m1, 16},
}};

MxElement mx_element_of(DType code) {
  MxElement e;
  if (auto f = dtype_fp8(code)) {
    e.kind = MxElement::Kind::fp8;
    e.fp8 = *f;
  } else if (code == DType::i8) {
    e.kind = MxElement::Kind::int8;
  } else {
    e.kind = MxElement::Kind::small_float;
    e.small = code == DType::f6e2m3   ? SmallFloat::e2m3
              : code == DType::f6e3m2 ? SmallFloat::e3m2
                                      : SmallFloat::e2m1;
  }
  return e;
}

}  // namespace

double GroupParams::code_value(uint64_t bits) const {
  switch (code) {
    case DType::hifloat8: return hif8_decode(static_cast<uint8_t>(bits));
    case DType::f8e4m3fn: return fp8_value(Fp8::e4m3fn, static_cast<unsigned>(bits));
    case DType::f8e5m2: return fp8_value(Fp8::e5m2, static_cast<unsigned>(bits));
    case DType::f6e2m3: return small_float_value(SmallFloat::e2m3, static_cast<unsigned>(bits));
    case DType::f6e3m2: return small_float_value(SmallFloat::e3m2, static_cast<unsigned>(bits));
    case DType::f4e2m1: return small_float_value(SmallFloat::e2m1, static_cast<unsigned>(bits));
    case DType::i8: return static_cast<int8_t>(bits);
    default: throw std::logic_error("GroupParams::code_value of an integer dtype");
  }
}

std::vector<Param> group_params_declared() {
  std::vector<nlohmann::json> formats;
  for (const FormatInfo& f : kFormats) formats.emplace_back(f.name);
  return {
      {.section = "attributes",
       .name = "code_format",
       .type = ParamType::string,
       .fallback = "int",
       .allowed = formats,
       .doc = "int: integer codes by bits and signed; f8e4m3fn, f8e5m2, hif8: 8-bit float codes under an f32 "
              "scale; mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4_e2m1, mxint8: OCP MX v1.0 blocks "
              "of 32 under an E8M0 scale; nvfp4: E2M1 under an E4M3 scale per 16 and an f32 global scale "
              "(specs/quantize-group.md)"},
      {.section = "attributes",
       .name = "bits",
       .derived = "the code format's width for every code_format but int, which needs it",
       .allowed = {4, 6, 8},
       .doc = "code width: 4 or 8 for int; 8 for FP8, HiF8, MXFP8 and MXINT8, 6 for MXFP6, 4 for MXFP4 and "
              "NVFP4"},
      {.section = "attributes",
       .name = "signed",
       .type = ParamType::boolean,
       .fallback = true,
       .doc = "signed (s4/i8) or unsigned (u4/u8) codes; every float code is signed"},
      {.section = "attributes",
       .name = "with_zero_point",
       .type = ParamType::boolean,
       .fallback = false,
       .doc = "asymmetric, with a zero point (or offset) per group; integer codes only"},
      {.section = "attributes",
       .name = "group_size",
       .derived = "32 for the MX formats, 16 for nvfp4 (their block); int, FP8 and HiF8 need it",
       .min = 1,
       .doc = "elements per group along a row, <= length"},
      {.section = "shapes", .name = "rows", .min = 1, .doc = "rows"},
      {.section = "shapes",
       .name = "length",
       .min = 1,
       .doc = "elements per row; the last group may be shorter"},
  };
}

GroupParams parse_group_params(Args& c) {
  GroupParams p;
  const std::string format = c.string("code_format");
  const FormatInfo* info = &kFormats[0];
  for (const FormatInfo& f : kFormats)
    if (format == f.name) info = &f;
  p.family = info->family;
  p.is_signed = c.boolean("signed");
  p.zero_point = c.boolean("with_zero_point");
  p.rows = c.integer("rows");
  p.length = c.integer("length");
  if (p.family == CodeFamily::integer) {
    if (!c.written("bits")) c.fail("bits", "code_format int needs bits: 4 or 8");
    p.bits = c.integer("bits");
    if (p.bits == 6) c.fail("bits", "integer codes are 4 or 8 bits wide");
    p.code = p.bits == 8 ? (p.is_signed ? DType::i8 : DType::u8) : (p.is_signed ? DType::s4 : DType::u4);
  } else {
    p.code = info->code;
    const int64_t width = p.code == DType::f6e2m3 || p.code == DType::f6e3m2 ? 6 : dtype_bits(p.code);
    if (c.written("bits") && c.integer("bits") != width)
      c.fail("bits",
             format + " codes are " + std::to_string(width) + " bits wide: bits " + std::to_string(width));
    p.bits = width;
    c.resolve("bits", width);
    if (!p.is_signed) c.fail("signed", format + " codes are signed: signed true");
    if (p.zero_point) c.fail("with_zero_point", format + " codes take a scale only: with_zero_point false");
  }
  if (info->block) {
    if (c.written("group_size") && c.integer("group_size") != info->block)
      c.fail("group_size", format + " blocks are " + std::to_string(info->block) + " elements: group_size " +
                               std::to_string(info->block));
    p.group_size = info->block;
    c.resolve("group_size", info->block);
  } else {
    if (!c.written("group_size")) c.fail("group_size", "code_format " + format + " needs group_size");
    p.group_size = c.integer("group_size");
  }
  if (p.group_size > p.length && !info->block) c.fail("group_size", "group_size must lie in [1, length]");
  if (p.family == CodeFamily::float8 && p.code != DType::hifloat8) p.fp8 = dtype_fp8(p.code);
  if (p.family == CodeFamily::mx) p.mx = mx_element_of(p.code);
  p.scale = p.family == CodeFamily::mx      ? DType::f8e8m0
            : p.family == CodeFamily::nvfp4 ? DType::f8e4m3fn
                                            : DType::f32;
  return p;
}

}  // namespace kvbench
