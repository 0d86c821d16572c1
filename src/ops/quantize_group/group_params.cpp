#include "ops/quantize_group/group_params.hpp"

namespace kvbench {

GroupParams parse_group_params(const CaseDef& c) {
  GroupParams p;
  p.bits = c.integer("attributes", "bits");
  p.is_signed = c.boolean("attributes", "signed", true);
  p.zero_point = c.boolean("attributes", "with_zero_point", false);
  p.group_size = c.integer("attributes", "group_size");
  p.rows = c.integer("shapes", "rows");
  p.length = c.integer("shapes", "length");
  if (p.bits != 4 && p.bits != 8) c.fail("attributes", "bits", "bits must be 4 or 8");
  if (p.rows < 1) c.fail("shapes", "rows", "rows must be at least 1");
  if (p.length < 1) c.fail("shapes", "length", "length must be at least 1");
  if (p.group_size < 1 || p.group_size > p.length)
    c.fail("attributes", "group_size", "group_size must lie in [1, length]");
  p.code = p.bits == 8 ? (p.is_signed ? DType::i8 : DType::u8) : (p.is_signed ? DType::s4 : DType::u4);
  return p;
}

}  // namespace kvbench
