#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#include "grid.glsl"
// ggml.GET_ROWS (specs/ggml.md): one invocation per output element,
// out[bm, i, c] = src[bm, indices[bm, i], c] as ggml dequantizes it (ggml_rows.glsl).
#include "ggml_rows.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint TYPE = 3u;
layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
layout(std430, binding = 2) writeonly buffer Out { float out_rows[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint elements, rows, cols, n_idx, row_bytes;
} pc;

GGML_ROW_READER(src_element, src)

void main() {
  const uint e = grid_invocation();
  if (e >= pc.elements) return;
  const uint c = e % pc.cols, ri = e / pc.cols, bm = ri / pc.n_idx;
  const uint row = bm * pc.rows + uint(indices[ri]);
  out_rows[e] = src_element(TYPE, row * pc.row_bytes, c);
}
