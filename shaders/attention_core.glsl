// The attention kernel every attention operator shares (MHCA, SDPA): work items planned on
// the host (src/ops/attention/attention_plan.cpp), an online softmax per query vector over
// one split of the keys, and the partial state (max m, sum l, accumulator) written for
// shaders/attention_merge.comp to combine.
//
// One item = one batch b, one kv head, up to QT query vectors that share it (the q heads of
// a GQA group, then consecutive rows), and one split [t0, t1) of the keys. Eight lanes serve
// an item: lane l owns dims [l*D/8, (l+1)*D/8) of every vector and of each K/V row, and a
// score is summed over the eight lanes with a shuffle butterfly (no shared memory, no
// barriers: lavapipe JIT-compiles barrier-free shaders fast).
//
// The including shader declares its buffers, its `Params` (which must hold num_items,
// num_heads and num_kv_heads) and `struct Batch` (what its hooks need of one batch), then
// includes this file, then defines the hooks declared below. D, the head size of Q and K,
// is specialization constant 0; V's head size DV (and DPLV = DV / LANES) is D unless the
// including shader defines both macros first (FIA's 192/128 heads).
#ifndef KVBENCH_ATTENTION_CORE_GLSL
#define KVBENCH_ATTENTION_CORE_GLSL
#include "grid.glsl"

const uint LANES = 8u;  // lanes per item
const uint QT = 4u;     // query vectors per item (kVectorsPerItem on the host)
// With D fixed at pipeline creation every per-lane loop has a constant trip count, so
// lavapipe keeps the arrays in registers instead of scattering them to memory.
layout(constant_id = 0) const uint D = 128u;
const uint DPL = D / LANES;  // dims per lane
#ifndef DV
#define DV D
#define DPLV DPL
#endif

layout(local_size_x = 64) in;
// Per batch: slot base, number of splits, split length. Per item: b, kv head, v0, nv, split.
layout(std430, binding = 28) readonly buffer BatchPlan { uint batch_plan[]; };
layout(std430, binding = 29) readonly buffer Items { uint items[]; };
layout(std430, binding = 30) writeonly buffer Partials { float partials[]; };

// The hooks.
Batch batch_info(uint b);
uint kv_length(Batch bt);
int last_key(Batch bt, uint row);  // last visible key of a query row (-1: none)
float query_at(Batch bt, uint row, uint head, uint d);  // element d of a query vector
uint key_handle(Batch bt, uint t);  // where key t lives, passed to the loads
void load_key(Batch bt, uint hk, uint handle, uint lane, out float k[DPL]);
void load_value(Batch bt, uint hk, uint handle, uint lane, out float v[DPLV]);
float score(Batch bt, uint row, uint head, uint t, float dot);  // the final score; -inf: masked

void main() {
  const uint invocation = grid_invocation();  // large plans dispatch a 2-D grid
  const uint item = invocation / LANES;
  const uint lane = invocation % LANES;
  if (item >= pc.num_items) return;  // whole groups of 8 lanes leave together
  const uint b = items[5u * item], hk = items[5u * item + 1u], v0 = items[5u * item + 2u];
  const uint nv = items[5u * item + 3u], split = items[5u * item + 4u];
  const uint slot_base = batch_plan[3u * b], nsplit = batch_plan[3u * b + 1u], chunk = batch_plan[3u * b + 2u];
  const uint H = pc.num_heads, G = pc.num_heads / pc.num_kv_heads;
  const Batch bt = batch_info(b);

  float q[QT][DPL];
  float acc[QT][DPLV];
  float m[QT], l[QT];
  uint row[QT], head[QT];
  int last[QT];
  int t_stop = -1;
  for (uint k = 0u; k < QT; ++k) {
    m[k] = uintBitsToFloat(0xff800000u);
    l[k] = 0.0;
    for (uint j = 0u; j < DPLV; ++j) acc[k][j] = 0.0;
    if (k >= nv) continue;
    const uint v = v0 + k;
    row[k] = v / G;
    head[k] = hk * G + v % G;
    last[k] = last_key(bt, row[k]);
    t_stop = max(t_stop, last[k]);
    for (uint j = 0u; j < DPL; ++j) q[k][j] = query_at(bt, row[k], head[k], lane * DPL + j);
  }
  const uint t0 = split * chunk;
  const int t1 = min(min(int(t0 + chunk), int(kv_length(bt))), t_stop + 1);
  for (int ti = int(t0); ti < t1; ++ti) {
    const uint t = uint(ti);
    const uint handle = key_handle(bt, t);
    float kr[DPL];
    load_key(bt, hk, handle, lane, kr);
    float p[QT];
    for (uint k = 0u; k < QT; ++k) {
      p[k] = 0.0;
      if (k >= nv) continue;
      float partial = 0.0;
      for (uint j = 0u; j < DPL; ++j) partial += q[k][j] * kr[j];
      const float dot = lane_sum(partial);
      if (ti > last[k]) continue;  // past the vector's last visible key
      const float s = score(bt, row[k], head[k], t, dot);
      if (isinf(s) && s < 0.0) continue;
      // The score is the same on the item's 8 lanes, so this branch is uniform: the
      // accumulator is rescaled only when the running maximum grows.
      if (s > m[k]) {
        const float rescale = exp(m[k] - s);
        l[k] *= rescale;
        for (uint j = 0u; j < DPLV; ++j) acc[k][j] *= rescale;
        m[k] = s;
      }
      p[k] = exp(s - m[k]);
      l[k] += p[k];
    }
    float vr[DPLV];
    load_value(bt, hk, handle, lane, vr);
    for (uint k = 0u; k < QT; ++k)
      for (uint j = 0u; j < DPLV; ++j) acc[k][j] += p[k] * vr[j];
  }

  for (uint k = 0u; k < nv; ++k) {
    const uint slot = slot_base + (row[k] * H + head[k]) * nsplit + split;
    const uint base = slot * (DV + 2u);
    if (lane == 0u) {
      partials[base] = m[k];
      partials[base + 1u] = l[k];
    }
    for (uint j = 0u; j < DPLV; ++j) partials[base + 2u + lane * DPLV + j] = acc[k][j];
  }
}

#endif
