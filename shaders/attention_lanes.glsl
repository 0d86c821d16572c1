// The CPU-shaped ("lanes") body of shaders/attention_core.glsl, included by it without
// KVBENCH_TILES. The hooks and their contract are declared there.
//
// One item = one batch b, one kv head, up to LANES query vectors that share it (the q heads
// of a GQA group, then consecutive rows), and one split [t0, t1) of the keys. LANES lanes
// (8; 4 for decodes with G <= 4 at heads <= 128 over at least 32768 K rows, so that a
// subgroup of 8 serves two items instead of leaving half its lanes idle) serve an item. Lane l owns the slice of dims
// [l*D/LANES, (l+1)*D/LANES) of every query vector and accumulator of the item, which is
// also the slice of each K/V row it loads (the hooks' slice), so each K/V element is loaded
// once per item and used where it was loaded: a lane computes every vector's partial dot
// over its slice, a reduce-scatter across the lanes (LANES - 1 shuffles) leaves vector l's
// whole score in lane l, which runs that vector's online softmax, and the P.V update needs
// only each vector's rescale and weight from its lane (2 * LANES shuffles). A key thus
// costs each lane one slice load of K and of V and about 3 * LANES shuffles however many
// query vectors the item has; there are no shared memory or barriers. It needs subgroups
// of at least 8 lanes with shuffles and D, DV <= 256 (above 32 elements per lane llvmpipe
// no longer unrolls the per-lane loops and the arrays are dynamically indexed):
// src/ops/attention/attention_kernel.cpp selects it only then (specs/attention-kernels.md).
#ifndef KVBENCH_ATTENTION_LANES_GLSL
#define KVBENCH_ATTENTION_LANES_GLSL
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 64) in;

// One step of the dots' reduce-scatter over the lanes whose bit `h` differs, as a macro
// with a literal h: a loop over h (h >>= 1) is not unrolled, and part[] then lives in memory.
#define REDUCE_SCATTER_STEP(h)                                                               \
  {                                                                                          \
    const bool upper = (lane & h) != 0u;                                                     \
    for (uint i = 0u; i < h; ++i) {                                                          \
      const float keep = upper ? part[i + h] : part[i], send = upper ? part[i] : part[i + h]; \
      part[i] = keep + subgroupShuffleXor(send, h);                                          \
    }                                                                                        \
  }

void main() {
  const uint invocation = grid_invocation();  // large plans dispatch a 2-D grid
  const uint item = invocation / LANES;
  const uint lane = invocation % LANES;
  if (item >= pc.num_items) return;  // whole groups of LANES lanes leave together
  const uint b = items[5u * item], hk = items[5u * item + 1u], v0 = items[5u * item + 2u];
  const uint nv = items[5u * item + 3u], split = items[5u * item + 4u];
  const uint slot_base = batch_plan[3u * b], nsplit = batch_plan[3u * b + 1u], chunk = batch_plan[3u * b + 2u];
  const uint H = pc.num_heads, G = pc.num_heads / pc.num_kv_heads;
  const Batch bt = batch_info(b);
#ifdef ATTENTION_ITEM_BEGIN
  item_begin(bt, hk, lane, lane);
#endif
  // The item's first lane in the subgroup: softmax weights are shuffled from lane base + g.
  const uint base = gl_SubgroupInvocationID & ~(LANES - 1u);

  // Lane l holds dims key_dim(l, j) of every query vector g ([l*DPL, (l+1)*DPL) unless
  // ATTENTION_CYCLIC_KEYS), those of its K slices, and [l*DPLV, (l+1)*DPLV) of every
  // accumulator (vectors past nv repeat the last one and are never written). Every loop below has
  // constant trip counts of at most 64, so lavapipe unrolls it and keeps the arrays in
  // registers (a loop over all D elements would not unroll, and its dynamic indices turn
  // every access into a chain of branches). All but the query's loop over its vectors: it
  // runs once per item, and unrolled it gave LLVM D copies of the operator's query load
  // (layout, dtype, rope) instead of DPL, about a quarter of a pipeline's compile. Its
  // writes with g dynamic cost a few instructions per element once per item, and q stays in
  // registers (specs/attention-kernels.md, "The query's loop not unrolled").
  float q[LANES][DPL];
  float acc[LANES][DPLV];
  [[dont_unroll]] for (uint g = 0u; g < LANES; ++g) {
    const uint vg = v0 + min(g, nv - 1u);
    for (uint j = 0u; j < DPL; ++j) q[g][j] = query_slice_at(bt, vg / G, hk * G + vg % G, lane, j);
  }
  for (uint g = 0u; g < LANES; ++g)
    for (uint j = 0u; j < DPLV; ++j) acc[g][j] = 0.0;
  // Lane l also owns vector l's softmax: its score, running max m and sum l.
  const bool has_vector = lane < nv;
  const uint v = v0 + min(lane, nv - 1u);
  const uint row = v / G, head = hk * G + v % G;
  const int last = has_vector ? last_key(bt, row) : -1;
  float m = uintBitsToFloat(0xff800000u), l = 0.0;

  // The loop runs to the item's last visible key: the largest `last` of its lanes.
  int t_stop = last;
  for (uint k = 1u; k < LANES; k <<= 1u) t_stop = max(t_stop, subgroupShuffleXor(t_stop, k));
  const uint t0 = split * chunk;
  const int t1 = min(min(int(t0 + chunk), int(kv_length(bt))), t_stop + 1);
  for (int ti = int(t0); ti < t1; ++ti) {
    const uint t = uint(ti);
    const uvec2 handle = key_handle(bt, t);
    float kr[DPL];
    load_key(bt, hk, handle, lane, kr);
    // Each lane's partial dots over its slice, then a reduce-scatter over the item's lanes:
    // at each step a lane keeps the half of the vectors whose bit `h` matches its own and
    // adds its partner's partials of them, so lane l ends with vector l's whole dot after
    // LANES - 1 shuffles (a shuffle of every K element to every lane would cost D).
    float part[LANES];
    for (uint g = 0u; g < LANES; ++g) {
      part[g] = 0.0;
      for (uint j = 0u; j < DPL; ++j) part[g] += q[g][j] * kr[j];
    }
    if (LANES == 8u) REDUCE_SCATTER_STEP(4u)
    REDUCE_SCATTER_STEP(2u)
    REDUCE_SCATTER_STEP(1u)
    // Branch-free online softmax (lavapipe executes both sides of a branch): a key that is
    // masked or past the lane's last visible key has s = -inf and p = 0.
    const float s = ti <= last ? score(bt, row, head, t, part[0]) : uintBitsToFloat(0xff800000u);
    const float m_new = max(m, s);
    const bool none = m_new == uintBitsToFloat(0xff800000u);  // no visible key yet: rescale 1, p 0
    const float rescale = none ? 1.0 : exp(m - m_new);
    const float p = none ? 0.0 : exp(s - m_new);
    m = m_new;
    l = l * rescale + p;
    const float w = ATTENTION_PV_WEIGHT(p);
    float vr[DPLV];
    load_value(bt, hk, handle, lane, vr);
    for (uint g = 0u; g < LANES; ++g) {
      const float rescale_g = subgroupShuffle(rescale, base + g), w_g = subgroupShuffle(w, base + g);
      // A key of weight 0 (masked for vector g) adds nothing, even an infinite V: a select,
      // not a branch (lavapipe runs a branch's body for every key anyway).
      for (uint j = 0u; j < DPLV; ++j) acc[g][j] = acc[g][j] * rescale_g + (w_g != 0.0 ? w_g * vr[j] : 0.0);
    }
  }

  // Vector g's partial state: m and l from lane g, the accumulator's slices from every lane.
  for (uint g = 0u; g < LANES; ++g) {
    if (g >= nv) break;
    const uint first = partial_first(slot_base, v0 + g, hk, G, H, nsplit, split);
    if (lane == g) {
      partials[first] = m;
      partials[first + 1u] = l;
    }
    for (uint j = 0u; j < DPLV; ++j) partials[first + 2u + lane * DPLV + j] = acc[g][j];
  }
}

#endif
