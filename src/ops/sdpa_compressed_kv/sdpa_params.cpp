#include "ops/sdpa_compressed_kv/sdpa_params.hpp"

#include <cmath>

#include "core/float_format.hpp"

namespace kvbench {

Shape SdpaParams::mask_shape() const {
  const bool n = mask[0] == 'N', h = mask.find(",H,") != std::string::npos,
             q = mask.find("Sq") != std::string::npos;
  return {n ? N : 1, h ? H : 1, q ? S_q : 1, S_kv};
}

int64_t SdpaParams::mask_stride(int axis) const {
  const Shape s = mask_shape();
  if (s[axis] == 1) return 0;
  int64_t stride = 1;
  for (int k = 3; k > axis; --k) stride *= s[k];
  return stride;
}

const Signature& sdpa_signature() {
  const std::vector<DType> codes{DType::u4, DType::s4, DType::u8, DType::i8},
      floats{DType::f16, DType::bf16, DType::f32};
  std::vector<DType> kv = codes;
  kv.insert(kv.end(), floats.begin(), floats.end());
  std::vector<DType> zps = codes;
  zps.push_back(DType::i32);
  static const Signature sig{
      .id = "dnnl.SDPACompressedKV",
      .doc =
          "scaled dot-product attention where K and/or V are u4/s4/u8/s8 codes with group scales and "
          "optional "
          "zero points, dequantized in f32 (specs/sdpa_compressed_kv.md)",
      .params =
          {
              {.section = "attributes",
               .name = "group_size",
               .min = 1,
               .doc = "elements per scale along D; divides D"},
              {.section = "attributes",
               .name = "k_compressed",
               .type = ParamType::boolean,
               .fallback = true,
               .doc = "K given as codes"},
              {.section = "attributes",
               .name = "v_compressed",
               .type = ParamType::boolean,
               .fallback = true,
               .doc = "V given as codes"},
              {.section = "attributes",
               .name = "k_zero_point",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "K has zero points"},
              {.section = "attributes",
               .name = "v_zero_point",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "V has zero points"},
              {.section = "attributes",
               .name = "k_layout",
               .type = ParamType::string,
               .fallback = "nhsd",
               .allowed = {"nhsd", "nhds"},
               .doc = "K as [N, H_kv, S_kv, D] or transposed"},
              {.section = "attributes",
               .name = "scale_op",
               .type = ParamType::string,
               .fallback = "multiply",
               .allowed = {"multiply", "divide"},
               .doc = "scores = QK^T * scale or / scale"},
              {.section = "attributes",
               .name = "scale",
               .type = ParamType::number,
               .derived = "1/sqrt(D)",
               .doc = "the scale, rounded to f32; positive"},
              {.section = "attributes",
               .name = "causal",
               .type = ParamType::string,
               .fallback = "none",
               .allowed = {"none", "top_left", "bottom_right"},
               .doc = "implicit causal mask"},
              {.section = "attributes",
               .name = "fpmath_mode",
               .type = ParamType::string,
               .derived = "the query's dtype (strict for f32), as the pattern's document asks",
               .allowed = {"strict", "f16", "bf16", "tf32", "any"},
               .doc = "the graph's fpmath_mode: the dtype (at least as accurate) computation may convert to"},
              {.section = "attributes",
               .name = "fpmath_apply_to_int",
               .type = ParamType::boolean,
               .fallback = true,
               .doc = "fpmath_mode applies to the integer K/V too: K~, V~ may be converted to its dtype"},
              {.section = "attributes",
               .name = "mask",
               .type = ParamType::string,
               .fallback = "none",
               .allowed = {"none", "1,1,Sq,Skv", "N,1,Sq,Skv", "N,H,Sq,Skv", "1,1,1,Skv", "N,1,1,Skv"},
               .doc = "shape of the explicit additive mask"},
              {.section = "shapes", .name = "N", .min = 1, .doc = "batch"},
              {.section = "shapes", .name = "H", .min = 1, .doc = "query heads"},
              {.section = "shapes", .name = "H_kv", .derived = "H", .min = 1, .doc = "kv heads; divides H"},
              {.section = "shapes", .name = "S_q", .min = 1, .doc = "query length"},
              {.section = "shapes", .name = "S_kv", .min = 1, .doc = "key/value length"},
              {.section = "shapes", .name = "D", .min = 1, .doc = "head size"},
              {.section = "shapes",
               .name = "masked_rows",
               .fallback = 0,
               .min = 0,
               .doc = "last query rows fully masked (needs an Sq mask)"},
          },
      .tensors =
          {
              {.name = "query",
               .shape = "[N, H, S_q, D]",
               .choices = floats,
               .dtype_rule = "f16 (default), bf16 or f32",
               .range = {{-1, 1}}},
              {.name = "key",
               .shape = "[N, H_kv, S_kv, D] (nhds: [N, H_kv, D, S_kv])",
               .choices = kv,
               .dtype_rule = "codes u4/s4/u8/i8 (default i8), or = query when uncompressed",
               .range = {{-1, 1}},
               .doc = "codes quantized from values drawn in the range"},
              {.name = "scale_k",
               .shape = "[N, H_kv, S_kv, D/G] (nhds: [N, H_kv, D/G, S_kv])",
               .choices = floats,
               .dtype_rule = "f32 (default), f16 or bf16",
               .present = "k_compressed"},
              {.name = "zp_k",
               .shape = "as scale_k",
               .choices = zps,
               .dtype_rule = "u4/s4/u8/i8/i32, default = key",
               .present = "k_zero_point"},
              {.name = "value",
               .shape = "[N, H_kv, S_kv, D]",
               .choices = kv,
               .dtype_rule = "codes u4/s4/u8/i8 (default i8), or = query when uncompressed",
               .range = {{-1, 1}},
               .doc = "codes quantized from values drawn in the range"},
              {.name = "scale_v",
               .shape = "[N, H_kv, S_kv, D/G]",
               .choices = floats,
               .dtype_rule = "f32 (default), f16 or bf16",
               .present = "v_compressed"},
              {.name = "zp_v",
               .shape = "as scale_v",
               .choices = zps,
               .dtype_rule = "u4/s4/u8/i8/i32, default = value",
               .present = "v_zero_point"},
              {.name = "scale", .shape = "[]", .dtype_rule = "f32", .doc = "attributes.scale"},
              {.name = "attn_mask",
               .shape = "by attributes.mask",
               .dtype_rule = "= query",
               .present = "mask != none",
               .doc = "uniform [-1, 1) with one in eight -inf; masked_rows rows all -inf"},
              {.name = "output", .role = Role::output, .shape = "[N, H, S_q, D]", .dtype_rule = "= query"},
          },
      .from_files = {"query", "key", "scale_k", "zp_k", "value", "scale_v", "zp_v", "attn_mask"},
      .sizes = {"N", "S_kv", "S_q", "H", "H_kv", "D", "group_size"},
      .faults = with_attention_faults({
          {"zero_point_after_scale", "K/V dequantized as q * s - zp instead of (q - zp) * s", ""},
          {"causal_alignment_swapped",
           "causal top-left and bottom-right exchanged (row r sees r + S_kv - S_q for 1, r for 2)", ""},
          {"causal_diagonal_excluded", "a causal row sees keys up to its limit, exclusive", ""},
          {"gqa_head_mod", "query head h reads kv head h % H_kv instead of h / (H / H_kv)", ""},
          {"scale_multiplied", "scale_op divide ignored: scores multiplied by scale", ""},
          {"gqa_group_past_8_reuses_query",
           "GQA in tiles of 8 query heads: member j >= 8 of a kv head's group computed with member j % 8's "
           "query (right only up to a group of 8)",
           "issue 62 (GQA mappings that hold only up to a group of 8; llama.cpp#28124 seen only at GQA 16)"},
          {"key_scale_groups_reversed",
           "K's group scales read in mirrored order along D (element d takes the scale of element D - 1 - "
           "d's "
           "group)",
           "vllm#50085 (NVFP4 V scales stored swizzled, read as linear)"},
          {"value_scale_dropped_in_decode",
           "V's scale taken as 1 on the decode path (S_q 1): V~ = q - zp; prefill applies it",
           "flashinfer#4979 (a path that ignores the scales another applies), sglang#20705 (scales silently "
           "1.0), flashinfer#1023"},
          {"mask_head_broadcast",
           "a per-head mask [N, H, S_q, S_kv] read as [N, 1, S_q, S_kv] (head 0's mask for every head)", ""},
          {"masked_row_nan",
           "a fully masked row gives NaN (softmax of all -inf) instead of zeros (inf_as_zero)", ""},
      }),
      .variants = with_attention_variants({
          {"kv_f32", "K~ and V~ dequantized in f32, whatever the scales' dtype",
           "oneDNN's CPU reference matmul (uxlfoundation/oneDNN@3f27bec2 src/cpu/matmul/ref_matmul.cpp) and "
           "benchdnn's reference path (tests/benchdnn/graph/setting_handler.cpp)"},
          {"kv_fpmath",
           "K~ and V~ in fpmath_mode's dtype where apply_to_int permits it: the scale rounded to it, then "
           "the "
           "product (tf32 as f16)",
           "oneDNN doc/graph/fusion_patterns/sdpa_with_compressed_kv.md and attributes_fpmath_mode.md (v3.7 "
           "to "
           "main); oneDNN's GPU kernel (gemmstone src/gpu/intel/gemm/jit/generator/pieces/quantization.cxx)"},
          {"onednn_gpu_micro",
           "kv_fpmath's K~ and V~, exp2 with a log2(e) prescale, exp(s - max) rounded to the query's dtype "
           "before "
           "P @ V, f32 sums, the row sum divided out at the end",
           "uxlfoundation/oneDNN@3f27bec2 src/gpu/intel/sdpa/micro.cl, micro.cpp"},
      }),
  };
  return sig;
}

namespace {

SdpaSide parse_side(Args& c, const std::string& which, DType q) {
  SdpaSide s;
  s.compressed = c.boolean(which + "_compressed");
  s.zero_point = c.boolean(which + "_zero_point");
  const std::string data = which == "k" ? "key" : "value";
  if (s.compressed) {
    s.data = c.dtype(data, DType::i8, {DType::u4, DType::s4, DType::u8, DType::i8});
    s.scale = c.dtype("scale_" + which, DType::f32);
    s.zp = c.dtype("zp_" + which, s.data);
  } else {
    s.data = c.dtype(data, q, {DType::f16, DType::bf16, DType::f32});
    if (s.zero_point) c.fail(which + "_zero_point", "an uncompressed " + data + " has no zero point");
  }
  return s;
}

}  // namespace

SdpaParams parse_sdpa_params(Args& c) {
  SdpaParams p;
  p.N = c.integer("N");
  p.H = c.integer("H");
  if (!c.written("H_kv")) c.resolve("H_kv", p.H);
  p.H_kv = c.integer("H_kv");
  p.S_q = c.integer("S_q");
  p.S_kv = c.integer("S_kv");
  p.D = c.integer("D");
  p.masked_rows = c.integer("masked_rows");
  p.G = c.integer("group_size");
  p.q = c.dtype("query", DType::f16);
  p.k = parse_side(c, "k", p.q);
  p.v = parse_side(c, "v", p.q);
  if (!p.k.compressed && !p.v.compressed)
    c.fail("k_compressed", "at least one of K and V must be compressed (k_compressed, v_compressed)");
  p.k_transposed = c.string("k_layout") == "nhds";
  p.divide = c.string("scale_op") == "divide";
  const std::string causal = c.string("causal");
  p.causal = causal == "none" ? 0 : causal == "top_left" ? 1 : 2;
  p.mask = c.string("mask");
  const std::string query_mode = p.q == DType::f32 ? "strict" : std::string(dtype_name(p.q));
  p.fpmath = c.written("fpmath_mode") ? c.string("fpmath_mode") : query_mode;
  c.resolve("fpmath_mode", p.fpmath);
  p.fpmath_to_int = c.boolean("fpmath_apply_to_int");
  if (p.H % p.H_kv != 0) c.fail("H_kv", "H_kv must divide H");
  if (p.D % p.G != 0) c.fail("group_size", "group_size must divide D");
  if (p.masked_rows > p.S_q) c.fail("masked_rows", "masked_rows must lie in [0, S_q]");
  if (p.masked_rows && (!p.has_mask() || p.mask_shape()[2] == 1))
    c.fail("masked_rows", "fully masked rows need a mask with an S_q dimension");
  p.scale = round_f32(c.written("scale") ? c.number("scale") : 1.0 / std::sqrt(static_cast<double>(p.D)));
  if (!(p.scale > 0) || !std::isfinite(p.scale)) c.fail("scale", "scale must be a positive finite number");
  c.resolve("scale", p.scale);
  return p;
}

}  // namespace kvbench
