#include "ops/quantize_group/group_params.hpp"

namespace kvbench {

std::vector<Param> group_params_declared() {
  return {
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
  return p;
}

}  // namespace kvbench
