#include "ops/quantize_group/group_params.hpp"

namespace kvbench {

std::vector<Param> group_params_declared() {
  return {
      {.section = "attributes",
       .name = "code_format",
       .type = ParamType::string,
       .fallback = "int",
       .allowed = {"int", "f8e4m3fn", "f8e5m2"},
       .doc = "integer codes (by bits and signed), or OCP FP8 codes (bits 8, signed, no zero point)"},
      {.section = "attributes", .name = "bits", .allowed = {4, 8}, .doc = "code width"},
      {.section = "attributes",
       .name = "signed",
       .type = ParamType::boolean,
       .fallback = true,
       .doc = "signed (s4/i8) or unsigned (u4/u8) codes"},
      {.section = "attributes",
       .name = "with_zero_point",
       .type = ParamType::boolean,
       .fallback = false,
       .doc = "asymmetric, with a zero point (or offset) per group"},
      {.section = "attributes",
       .name = "group_size",
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
  p.bits = c.integer("bits");
  p.is_signed = c.boolean("signed");
  p.zero_point = c.boolean("with_zero_point");
  p.group_size = c.integer("group_size");
  p.rows = c.integer("rows");
  p.length = c.integer("length");
  if (p.group_size > p.length) c.fail("group_size", "group_size must lie in [1, length]");
  p.code = p.bits == 8 ? (p.is_signed ? DType::i8 : DType::u8) : (p.is_signed ? DType::s4 : DType::u4);
  const std::string format = c.string("code_format");
  if (format != "int") {
    p.code = *parse_dtype(format);
    p.fp8 = dtype_fp8(p.code);
    if (p.bits != 8) c.fail("bits", "FP8 codes (code_format " + format + ") are 8 bits wide: bits 8");
    if (!p.is_signed) c.fail("signed", "FP8 codes are signed: signed true");
    if (p.zero_point) c.fail("with_zero_point", "FP8 codes take a scale only: with_zero_point false");
  }
  return p;
}

}  // namespace kvbench
