#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#include "grid.glsl"
// kvbench.DequantizeGroup: one invocation per element, with the PPL, oneDNN or Ascend formula;
// FP8 and HiF8 codes times their scale; MX codes times 2^(e - 127); NVFP4 codes times their
// block scale, then the tensor scale.
#include "code_formats.glsl"
#include "quant.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer Scale { uint scale[]; };
layout(std430, binding = 2) readonly buffer Shift { uint shift[]; };  // zero_point or offset
layout(std430, binding = 3) buffer Y { uint y[]; };
layout(std430, binding = 4) readonly buffer TensorScale { uint tensor_scale[]; };  // NVFP4

const uint FAMILY_INTEGER = 0u, FAMILY_FLOAT8 = 1u, FAMILY_MX = 2u, FAMILY_NVFP4 = 3u;  // CodeFamily

const uint FORMULA_PPL = 0u, FORMULA_ONEDNN = 1u, FORMULA_ASCEND = 2u;

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint rows, row_length, group_size, groups;
  uint x_dtype, y_dtype, scale_dtype, shift_dtype;
  uint formula, has_shift, code_family;
} pc;

void main() {
  const uint i = grid_invocation();  // large launches are a 2-D grid
  if (i >= pc.rows * pc.row_length) return;
  const uint g = (i / pc.row_length) * pc.groups + (i % pc.row_length) / pc.group_size;
  const uint raw = LOAD_BITS(x, i, dtype_bits(pc.x_dtype));
  const uint sbits = LOAD_BITS(scale, g, dtype_bits(pc.scale_dtype));
  const float s = decode_float(sbits, pc.scale_dtype);  // a float scale (integer, FP8 and HiF8 codes)
  float v;
  if (pc.code_family == FAMILY_MX) {  // value * 2^(e - 127), in f32; 0xFF: NaN
    float q;
    if (is_fp8(pc.x_dtype)) q = fp8_to_float(raw, pc.x_dtype);
    else if (pc.x_dtype == DT_I8) q = float(sign_extend(raw, 8u)) * 0.015625;
    else q = small_float_to_float(raw, pc.x_dtype);
    precise float p = q * e8m0_to_float(sbits);
    v = p;
  } else if (pc.code_family == FAMILY_NVFP4) {  // (value * sf) exactly, then * the tensor scale
    precise float p = small_float_to_float(raw, DT_F4E2M1) * fp8_to_float(sbits, DT_F8E4M3FN);
    precise float r = p * uintBitsToFloat(tensor_scale[0]);
    v = r;
  } else if (pc.code_family == FAMILY_FLOAT8) {  // no zero point or offset: the product, in S (ppl) or f32
    precise float p = (pc.x_dtype == DT_HIFLOAT8 ? hif8_to_float(raw) : fp8_to_float(raw, pc.x_dtype)) * s;
    v = pc.formula == FORMULA_PPL ? round_to(p, pc.scale_dtype) : p;
  } else if (pc.formula == FORMULA_PPL) {
    v = dequant_ppl(decode_int(raw, pc.x_dtype), s, pc.scale_dtype);
  } else if (pc.formula == FORMULA_ONEDNN) {
    const int zp = pc.has_shift != 0u ? decode_int(LOAD_BITS(shift, g, dtype_bits(pc.shift_dtype)), pc.shift_dtype) : 0;
    v = dequant_zero_point(decode_int(raw, pc.x_dtype), zp, s);
  } else {
    const float offset = pc.has_shift != 0u ? decode_float(LOAD_BITS(shift, g, dtype_bits(pc.shift_dtype)), pc.shift_dtype) : 0.0;
    v = dequant_offset(decode_int(raw, pc.x_dtype), offset, s);
  }
  STORE_BITS(y, i, dtype_bits(pc.y_dtype), encode_float(v, pc.y_dtype));
}
