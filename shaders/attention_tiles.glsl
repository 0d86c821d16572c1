// The GPU-shaped ("tiles") body of shaders/attention_core.glsl, included by it with
// KVBENCH_TILES defined. The hooks and their contract are declared there.
//
// Flash-decoding with GQA packing: one workgroup of WG = 128 invocations per item (batch
// b, kv head hk, up to NV = 8 query vectors sharing hk, split [t0, t1) of the keys). The
// item's query vectors sit in shared memory; the keys are walked in tiles of TK keys, and
// each tile of K, then of V, is loaded once for all the item's vectors into one shared
// buffer (by the hooks, 8 elements a load, dequantized there):
//   1. K tile: TK * D/8 slice loads spread over the invocations;     barrier
//   2. scores: one (vector, key) pair per invocation (TK = 16) or a quarter of them
//      (TK = 4), scale/mask/pse by the score hook;                   barrier
//   3. online softmax: invocation v < NV updates its vector's max m, sum l and the
//      rescale factor, and turns the tile's scores into p; all load the V tile;  barrier
//   4. P.V: invocation i owns vector i / 16 and channels i % 16 + 16 k, k < DV/16;  barrier
// Nothing depends on the subgroup size (no subgroup operation). Per invocation the arrays
// are acc[ceil(DV / 16)] (at most 32 floats for DV <= 512) and one slice of 8: at most
// 40 floats. Shared memory: q 4*NV*D bytes + tile 4*TK*(max(D, DV) + 1) + scores 4*NV*TK
// + 3 * 4*NV + handles 8*2*TK: 12.9 KiB at D 128, 24.9 KiB at D 256, 27.3 KiB at MLA's 576/512 (TK = 4
// past 256; tiles_shared_bytes() on the host, checked against the device's limit). Rows of the tile are padded by one float so that a GPU's invocations reading
// one channel of consecutive keys hit different banks.
#ifndef KVBENCH_ATTENTION_TILES_GLSL
#define KVBENCH_ATTENTION_TILES_GLSL

const uint WG = 128u;  // invocations per workgroup (kTilesWorkgroup on the host)
const uint NV = 8u;    // query vectors per item (kVectorsPerItem on the host)
const uint PVL = WG / NV;  // invocations per vector in P.V: 16
layout(local_size_x = 128) in;

const uint MAXD = D > DV ? D : DV;
const uint TK = MAXD <= 256u ? 16u : 4u;  // keys per tile
const uint KS = MAXD + 1u;                // floats per tile row (padded)
const uint NCH = D / DPL, NCHV = DV / DPLV;  // slices per K, V row
const uint CPV = (DV + PVL - 1u) / PVL;   // channels per invocation in P.V

shared float q_s[NV * D];
shared float kv_s[TK * KS];
shared float p_s[NV * TK];  // scores, then probabilities
shared float m_s[NV], l_s[NV], r_s[NV];
// key_handle() of the tile's keys and of the next tile's (ping-pong halves of TK): fetched
// once per key, by TK invocations while the V tile loads, rather than by each of the key's
// D / 8 slice loads at the head of its chain (a page-table read and a division on a GPU).
shared uvec2 h_s[2u * TK];

#define NEG_INF uintBitsToFloat(0xff800000u)
bool is_neg_inf(float x) { return isinf(x) && x < 0.0; }

void main() {
  const uint item = grid_workgroup();  // large plans dispatch a 2-D grid
  if (item >= pc.num_items) return;    // the whole workgroup leaves together
  const uint lid = gl_LocalInvocationIndex;
  const uint b = items[5u * item], hk = items[5u * item + 1u], v0 = items[5u * item + 2u];
  const uint nv = items[5u * item + 3u], split = items[5u * item + 4u];
  const uint slot_base = batch_plan[3u * b], nsplit = batch_plan[3u * b + 1u], chunk = batch_plan[3u * b + 2u];
  const uint H = pc.num_heads, G = pc.num_heads / pc.num_kv_heads;
  const Batch bt = batch_info(b);

  // The item's query vectors (zeros past nv), and the last key any of them sees.
  for (uint i = lid; i < NV * D; i += WG) {
    const uint vl = i / D, v = v0 + vl;
    q_s[i] = vl < nv ? query_at(bt, v / G, hk * G + v % G, i % D) : 0.0;
  }
  int t_stop = -1;
  for (uint vl = 0u; vl < nv; ++vl) t_stop = max(t_stop, last_key(bt, (v0 + vl) / G));
  if (lid < NV) {
    m_s[lid] = NEG_INF;
    l_s[lid] = 0.0;
  }
  const uint t0 = split * chunk;
  const int t1 = min(min(int(t0 + chunk), int(kv_length(bt))), t_stop + 1);

  // This invocation's share of P.V: vector pv, channels pc0 + PVL * k.
  const uint pv = lid / PVL, pc0 = lid % PVL;
  float acc[CPV];
  for (uint k = 0u; k < CPV; ++k) acc[k] = 0.0;
  // The handles of the first tile; each tile fetches the next one's in step 3.
  const uint hl = lid - (WG - TK);  // invocations WG - TK .. WG - 1 (not the softmax's first NV)
  if (lid >= WG - TK) h_s[hl] = int(t0 + hl) < t1 ? key_handle(bt, t0 + hl) : uvec2(0u);
  barrier();

  uint cur = 0u;  // the half of h_s holding this tile's handles
  for (int tb = int(t0); tb < t1; tb += int(TK), cur = TK - cur) {  // uniform over the workgroup
    // 1. The K tile; keys past t1 are zeros.
    for (uint i = lid; i < TK * NCH; i += WG) {
      const uint tt = i / NCH, c = i % NCH;
      float x[DPL];
      if (tb + int(tt) < t1) {
        load_key(bt, hk, h_s[cur + tt], c, x);
      } else {
        for (uint j = 0u; j < DPL; ++j) x[j] = 0.0;
      }
      for (uint j = 0u; j < DPL; ++j) kv_s[tt * KS + c * DPL + j] = x[j];
    }
    barrier();
    // 2. Scores of (vector, key) pairs; -inf where the key is not visible.
    for (uint i = lid; i < NV * TK; i += WG) {
      const uint vl = i / TK, tt = i % TK;
      const int ti = tb + int(tt);
      float s = NEG_INF;
      if (vl < nv && ti < t1) {
        const uint v = v0 + vl, row = v / G, head = hk * G + v % G;
        if (ti <= last_key(bt, row)) {
          float dot = 0.0;
          for (uint d = 0u; d < D; ++d) dot += q_s[vl * D + d] * kv_s[tt * KS + d];
          s = score(bt, row, head, uint(ti), dot);
        }
      }
      p_s[i] = s;
    }
    barrier();
    // 3. The online softmax of each vector over the tile (the K tile is no longer read:
    //    the V tile replaces it meanwhile).
    if (lid < NV) {
      const float m_old = m_s[lid];
      float m_new = m_old;
      for (uint tt = 0u; tt < TK; ++tt) m_new = max(m_new, p_s[lid * TK + tt]);
      float rescale = 1.0, sum = 0.0;
      for (uint tt = 0u; tt < TK; ++tt) {
        const float s = p_s[lid * TK + tt];
        const float p = is_neg_inf(s) ? 0.0 : exp(s - m_new);
        p_s[lid * TK + tt] = p;
        sum += p;
      }
      if (!is_neg_inf(m_new)) rescale = exp(m_old - m_new);  // 0 while nothing was visible
      m_s[lid] = m_new;
      l_s[lid] = l_s[lid] * rescale + sum;
      r_s[lid] = rescale;
    }
    // The next tile's handles into the other half (last read before the previous barrier).
    if (lid >= WG - TK) h_s[TK - cur + hl] = tb + int(TK + hl) < t1 ? key_handle(bt, uint(tb) + TK + hl) : uvec2(0u);
    for (uint i = lid; i < TK * NCHV; i += WG) {
      const uint tt = i / NCHV, c = i % NCHV;
      float x[DPLV];
      if (tb + int(tt) < t1) {
        load_value(bt, hk, h_s[cur + tt], c, x);
      } else {
        for (uint j = 0u; j < DPLV; ++j) x[j] = 0.0;
      }
      for (uint j = 0u; j < DPLV; ++j) kv_s[tt * KS + c * DPLV + j] = x[j];
    }
    barrier();
    // 4. acc = acc * rescale + sum over the tile of p * V.
    const float rescale = r_s[pv];
    for (uint k = 0u; k < CPV; ++k) acc[k] *= rescale;
    for (uint tt = 0u; tt < TK; ++tt) {
      const float p = ATTENTION_PV_WEIGHT(p_s[pv * TK + tt]);
      if (p == 0.0) continue;  // a key of weight 0 (masked) adds nothing, even an infinite V
      for (uint k = 0u; k < CPV; ++k)
        if (pc0 + PVL * k < DV) acc[k] += p * kv_s[tt * KS + pc0 + PVL * k];
    }
    barrier();
  }

  // Direct output (one split): the accumulators into shared memory (q_s, free now; the host
  // turns it on only where DV <= D), then each invocation finishes whole output words.
  if (direct_output()) {
    const Finish f = direct_finish();
    const uint per_word = 32u / dtype_bits(f.out_dtype), words = DV / per_word;
    if (pv < nv)
      for (uint k = 0u; k < CPV; ++k)
        if (pc0 + PVL * k < DV) q_s[pv * DV + pc0 + PVL * k] = acc[k];
    barrier();
    for (uint i = lid; i < nv * words; i += WG) {
      const uint vl = i / words, d0 = (i % words) * per_word, v = v0 + vl;
      const uvec2 dv = direct_vector(partial_slot(slot_base, v, hk, G, H, nsplit, split));
      float o[4] = float[4](0.0, 0.0, 0.0, 0.0);
      for (uint k = 0u; k < per_word; ++k) o[k] = q_s[vl * DV + d0 + k];
      finish_word(f, per_word, (dv.x * DV + d0) / per_word, hk * G + v % G, d0, o, m_s[vl], l_s[vl]);
      if (d0 == 0u) finish_lse(f, dv.y, m_s[vl], l_s[vl]);
    }
    return;
  }
  if (pv >= nv) return;
  const uint first = partial_first(slot_base, v0 + pv, hk, G, H, nsplit, split);
  if (pc0 == 0u) {
    partials[first] = m_s[pv];
    partials[first + 1u] = l_s[pv];
  }
  for (uint k = 0u; k < CPV; ++k)
    if (pc0 + PVL * k < DV) partials[first + 2u + pc0 + PVL * k] = acc[k];
}

#endif
