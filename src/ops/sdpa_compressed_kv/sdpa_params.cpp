#include "ops/sdpa_compressed_kv/sdpa_params.hpp"

#include <cmath>

#include "core/float_format.hpp"

namespace kvbench {

Shape SdpaParams::mask_shape() const {
  const bool n = mask[0] == 'N', h = mask.find(",H,") != std::string::npos, q = mask.find("Sq") != std::string::npos;
  return {n ? N : 1, h ? H : 1, q ? S_q : 1, S_kv};
}

int64_t SdpaParams::mask_stride(int axis) const {
  const Shape s = mask_shape();
  if (s[axis] == 1) return 0;
  int64_t stride = 1;
  for (int k = 3; k > axis; --k) stride *= s[k];
  return stride;
}

namespace {

SdpaSide parse_side(const CaseDef& c, const std::string& which, DType q) {
  SdpaSide s;
  s.compressed = c.boolean("attributes", which + "_compressed", true);
  s.zero_point = c.boolean("attributes", which + "_zero_point", false);
  const std::string data = which == "k" ? "key" : "value";
  if (s.compressed) {
    s.data = c.dtype(data, DType::i8, {DType::u4, DType::s4, DType::u8, DType::i8});
    s.scale = c.dtype("scale_" + which, DType::f32, {DType::f32, DType::f16, DType::bf16});
    if (s.zero_point) s.zp = c.dtype("zp_" + which, s.data, {DType::u4, DType::s4, DType::u8, DType::i8, DType::i32});
  } else {
    s.data = c.dtype(data, q, {DType::f16, DType::bf16, DType::f32});
    if (s.zero_point) c.fail("attributes", which + "_zero_point", "an uncompressed " + data + " has no zero point");
  }
  return s;
}

}  // namespace

SdpaParams parse_sdpa_params(const CaseDef& c) {
  SdpaParams p;
  p.N = c.integer("shapes", "N");
  p.H = c.integer("shapes", "H");
  p.H_kv = c.integer("shapes", "H_kv", p.H);
  p.S_q = c.integer("shapes", "S_q");
  p.S_kv = c.integer("shapes", "S_kv");
  p.D = c.integer("shapes", "D");
  p.masked_rows = c.integer("shapes", "masked_rows", 0);
  p.G = c.integer("attributes", "group_size");
  p.q = c.dtype("query", DType::f16, {DType::f16, DType::bf16, DType::f32});
  if (c.has("dtypes", "output") && c.dtype("output", p.q, {DType::f16, DType::bf16, DType::f32}) != p.q)
    c.fail("dtypes", "output", "the output has the query's dtype");
  p.k = parse_side(c, "k", p.q);
  p.v = parse_side(c, "v", p.q);
  if (!p.k.compressed && !p.v.compressed)
    c.fail("attributes", "k_compressed", "at least one of K and V must be compressed (k_compressed, v_compressed)");
  const std::string layout = c.string("attributes", "k_layout", "nhsd");
  if (layout != "nhsd" && layout != "nhds") c.fail("attributes", "k_layout", "k_layout must be nhsd or nhds");
  p.k_transposed = layout == "nhds";
  const std::string op = c.string("attributes", "scale_op", "multiply");
  if (op != "multiply" && op != "divide") c.fail("attributes", "scale_op", "scale_op must be multiply or divide");
  p.divide = op == "divide";
  const std::string causal = c.string("attributes", "causal", "none");
  if (causal == "none") p.causal = 0;
  else if (causal == "top_left") p.causal = 1;
  else if (causal == "bottom_right") p.causal = 2;
  else c.fail("attributes", "causal", "causal must be none, top_left or bottom_right");
  p.mask = c.string("attributes", "mask", "none");
  if (p.mask != "none" && p.mask != "1,1,Sq,Skv" && p.mask != "N,1,Sq,Skv" && p.mask != "N,H,Sq,Skv" &&
      p.mask != "1,1,1,Skv" && p.mask != "N,1,1,Skv")
    c.fail("attributes", "mask", "mask must be none, 1,1,Sq,Skv, N,1,Sq,Skv, N,H,Sq,Skv, 1,1,1,Skv or N,1,1,Skv");
  for (const char* dim : {"N", "H", "S_q", "S_kv", "D"})
    if (c.integer("shapes", dim, 1) < 1) c.fail("shapes", dim, std::string(dim) + " must be at least 1");
  if (p.H_kv < 1 || p.H % p.H_kv != 0) c.fail("shapes", "H_kv", "H_kv must divide H");
  if (p.G < 1 || p.D % p.G != 0) c.fail("attributes", "group_size", "group_size must divide D");
  if (p.masked_rows < 0 || p.masked_rows > p.S_q) c.fail("shapes", "masked_rows", "masked_rows must lie in [0, S_q]");
  if (p.masked_rows && (!p.has_mask() || p.mask_shape()[2] == 1))
    c.fail("shapes", "masked_rows", "fully masked rows need a mask with an S_q dimension");
  p.scale = round_f32(c.has("attributes", "scale") ? c.body["attributes"]["scale"].get<double>()
                                                    : 1.0 / std::sqrt(static_cast<double>(p.D)));
  if (!(p.scale > 0) || !std::isfinite(p.scale)) c.fail("attributes", "scale", "scale must be a positive finite number");
  return p;
}

}  // namespace kvbench
