#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#include "grid.glsl"
// ggml.SET_ROWS (specs/ggml.md): one invocation per written row, storing it as ggml's
// quantize_row_<type>_ref does, every step in f32 in its order (multiplications and
// additions are correctly rounded under RoundingModeRTE; divisions through div_rn). Blocks
// are not word-aligned (34, 18, 20, 22, 24 bytes), so bytes are written with atomics: the
// other bytes of a word, another row's, are never touched.
#include "float_format.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint TYPE = 3u;
layout(constant_id = 1) const bool INDEX_I64 = true;
layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) readonly buffer Indices { uint indices[]; };
layout(std430, binding = 2) buffer Dst { uint dst[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint written, mats, rows, cols, n_idx, idx_mats, idx_batch, row_bytes;
} pc;

const uint GT_F32 = 0u, GT_F16 = 1u, GT_BF16 = 2u, GT_Q8_0 = 3u, GT_Q4_0 = 4u, GT_Q4_1 = 5u, GT_Q5_0 = 6u,
           GT_Q5_1 = 7u, GT_IQ4_NL = 8u;
const float IQ4NL_VALUES[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0, 1.0, 13.0, 25.0,
                                         38.0, 53.0, 69.0, 89.0, 113.0);

void put_bits(uint byte, uint value, uint width) {  // width 8 or 16, within one word
  const uint sh = (byte & 3u) * 8u, mask = (width == 8u ? 0xffu : 0xffffu) << sh;
  atomicAnd(dst[byte >> 2u], ~mask);
  atomicOr(dst[byte >> 2u], (value << sh) & mask);
}

// roundf: halves away from zero (x - trunc(x) is exact).
float round_half_away(float x) {
  const float t = trunc(x);
  return abs(x - t) >= 0.5 ? t + sign(x) : t;
}

int best_index_iq4nl(float x) {
  if (x <= IQ4NL_VALUES[0]) return 0;
  if (x >= IQ4NL_VALUES[15]) return 15;
  int ml = 0, mu = 15;
  while (mu - ml > 1) {
    const int mav = (ml + mu) / 2;
    if (x < IQ4NL_VALUES[mav]) mu = mav; else ml = mav;
  }
  precise float below = x - IQ4NL_VALUES[mu - 1], above = IQ4NL_VALUES[mu] - x;
  return below < above ? mu - 1 : mu;
}

void main() {
  const uint w = grid_invocation();
  if (w >= pc.written) return;
  // Written row w = ((b * mats + m) * n_idx + i): its target from the broadcast indices.
  const uint i = w % pc.n_idx, bm = w / pc.n_idx, m = bm % pc.mats, b = bm / pc.mats;
  const uint fi = ((b % pc.idx_batch) * pc.idx_mats + m % pc.idx_mats) * pc.n_idx + i;
  const uint target = INDEX_I64 ? indices[2u * fi] : indices[fi];  // rows < 2^32: the low word
  const uint x0 = w * pc.cols, row_byte = (bm * pc.rows + target) * pc.row_bytes;
  if (TYPE == GT_F32 || TYPE == GT_F16 || TYPE == GT_BF16) {
    for (uint c = 0u; c < pc.cols; ++c) {
      const float x = src[x0 + c];
      if (TYPE == GT_F32) dst[(row_byte >> 2u) + c] = floatBitsToUint(x);
      else put_bits(row_byte + 2u * c, TYPE == GT_F16 ? float_to_f16(x) : float_to_bf16(x), 16u);
    }
    return;
  }
  const uint bytes = TYPE == GT_Q8_0 ? 34u : TYPE == GT_Q4_1 ? 20u : TYPE == GT_Q5_0 ? 22u : TYPE == GT_Q5_1 ? 24u : 18u;
  uint iq4[32];  // ggml's L: an iq4_nl block of amax < 1e-15 keeps the previous block's codes
  for (uint j = 0u; j < 32u; ++j) iq4[j] = 0u;
  for (uint blk = 0u; blk < pc.cols / 32u; ++blk) {
    float x[32];
    for (uint j = 0u; j < 32u; ++j) x[j] = src[x0 + blk * 32u + j];
    const uint at = row_byte + blk * bytes;
    uint codes[32];
    float amax = 0.0, vmax = 0.0, vmin = 3.402823466e38, vtop = -3.402823466e38;
    for (uint j = 0u; j < 32u; ++j) {
      if (amax < abs(x[j])) { amax = abs(x[j]); vmax = x[j]; }
      vmin = min(vmin, x[j]);
      vtop = max(vtop, x[j]);
    }
    if (TYPE == GT_Q8_0) {
      const float d = div_rn(amax, 127.0), id = d != 0.0 ? div_rn(1.0, d) : 0.0;
      put_bits(at, float_to_f16(d), 16u);
      for (uint j = 0u; j < 32u; ++j) {
        precise float v = x[j] * id;
        put_bits(at + 2u + j, uint(int(round_half_away(v))) & 0xffu, 8u);
      }
      continue;
    }
    uint qs = at + 2u;
    if (TYPE == GT_Q4_0 || TYPE == GT_Q5_0) {
      const bool five = TYPE == GT_Q5_0;
      const float d = div_rn(vmax, five ? -16.0 : -8.0), id = d != 0.0 ? div_rn(1.0, d) : 0.0;
      put_bits(at, float_to_f16(d), 16u);
      for (uint j = 0u; j < 32u; ++j) {
        precise float p = x[j] * id;
        precise float v = p + (five ? 16.5 : 8.5);
        codes[j] = uint(min(five ? 31 : 15, int(v)));
      }
    } else if (TYPE == GT_Q4_1 || TYPE == GT_Q5_1) {
      const bool five = TYPE == GT_Q5_1;
      precise float range = vtop - vmin;
      const float d = div_rn(range, five ? 31.0 : 15.0), id = d != 0.0 ? div_rn(1.0, d) : 0.0;
      put_bits(at, float_to_f16(d), 16u);
      put_bits(at + 2u, float_to_f16(vmin), 16u);
      qs = at + 4u;
      for (uint j = 0u; j < 32u; ++j) {
        precise float p = (x[j] - vmin) * id;
        precise float v = p + 0.5;
        codes[j] = five ? uint(v) : uint(min(15, int(v)));
      }
    } else {  // iq4_nl: quantize_row_iq4_nl_impl with ntry = -1, weights x^2
      float d = 0.0;
      if (!(amax < 1e-15)) {
        d = div_rn(vmax, -127.0);
        const float id = div_rn(1.0, d);
        precise float sumqx = 0.0, sumq2 = 0.0;
        for (uint j = 0u; j < 32u; ++j) {
          precise float al = id * x[j];
          const int l = best_index_iq4nl(al);
          iq4[j] = uint(l);
          const float q = IQ4NL_VALUES[l];
          precise float wq = (x[j] * x[j]) * q;
          sumqx = sumqx + wq * x[j];
          sumq2 = sumq2 + wq * q;
        }
        d = sumq2 > 0.0 ? div_rn(sumqx, sumq2) : 0.0;
      }
      put_bits(at, float_to_f16(d), 16u);
      for (uint j = 0u; j < 32u; ++j) codes[j] = iq4[j];
    }
    if (TYPE == GT_Q5_0 || TYPE == GT_Q5_1) {
      for (uint k = 0u; k < 4u; ++k) {
        uint h = 0u;
        for (uint j = 0u; j < 8u; ++j) h |= ((codes[8u * k + j] >> 4u) & 1u) << j;
        put_bits(qs + k, h, 8u);
      }
      qs += 4u;
    }
    for (uint j = 0u; j < 16u; ++j) put_bits(qs + j, (codes[j] & 15u) | ((codes[j + 16u] & 15u) << 4u), 8u);
  }
}
