// The CPU-shaped ("lanes") body of shaders/attention_core.glsl, included by it without
// KVBENCH_TILES. The hooks and their contract are declared there.
//
// One item = one batch b, one kv head, up to LANES query vectors that share it (the q heads
// of a GQA group, then consecutive rows), and one split [t0, t1) of the keys. LANES lanes
// (8; 4 for decodes with G <= 4 at heads <= 128, so that a subgroup of 8 serves two items
// instead of leaving half its lanes idle) serve an item, one query vector each: lane l
// holds its vector's q and accumulator whole and computes its own scores and softmax. Each
// K/V row is loaded once per item, by its lanes together (lane l loads dims
// [l*D/LANES, (l+1)*D/LANES), the hooks' slice), and every lane reads the other lanes'
// elements by subgroup shuffles. So a key costs each lane one
// slice load of K and of V however many query vectors the item has, which is what makes
// prefill fast on lavapipe (a load there is a loop over the lanes; arithmetic is 8-wide),
// and there are no shared memory or barriers. It needs subgroups of at least 8 lanes with
// shuffles and D, DV <= 256 (above 32 elements per lane llvmpipe no longer unrolls the
// per-lane loops and the arrays are dynamically indexed): src/ops/attention/attention_kernel.cpp
// selects it only then (specs/runtime.md "The attention kernels").
#ifndef KVBENCH_ATTENTION_LANES_GLSL
#define KVBENCH_ATTENTION_LANES_GLSL

layout(local_size_x = 64) in;

// The source lanes as literals, so that every shuffle index is a constant (lanes 4-7 only
// when LANES is 8: the condition folds when the pipeline is specialized).
#define FOR_EACH_LANE(X) X(0u) X(1u) X(2u) X(3u) if (LANES == 8u) { X(4u) X(5u) X(6u) X(7u) }

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
#ifdef ATTENTION_ITEM_BEGIN
  item_begin(bt, hk, lane);
#endif
  // The item's first lane in the subgroup: K/V elements are shuffled from lane base + src.
  const uint base = gl_SubgroupInvocationID & ~(LANES - 1u);

  // This lane's query vector (none when lane >= nv: the lane still loads and shuffles).
  const bool has_vector = lane < nv;
  const uint v = v0 + min(lane, nv - 1u);
  const uint row = v / G, head = hk * G + v % G;
  const int last = has_vector ? last_key(bt, row) : -1;
  // Indexed [source lane][element] like the shuffled K/V: every loop below is nested with
  // constant trip counts of at most 16, so lavapipe unrolls them and keeps the arrays in
  // registers (a loop over all D elements would not unroll, and its dynamic indices turn
  // every access into a chain of branches).
  float q[LANES][DPL];
  float acc[LANES][DPLV];
  for (uint src = 0u; src < LANES; ++src) {
    for (uint j = 0u; j < DPL; ++j) q[src][j] = has_vector ? query_at(bt, row, head, src * DPL + j) : 0.0;
    for (uint j = 0u; j < DPLV; ++j) acc[src][j] = 0.0;
  }
  float m = uintBitsToFloat(0xff800000u), l = 0.0;

  // The loop runs to the item's last visible key: the largest `last` of its lanes.
  int t_stop = last;
  for (uint k = 1u; k < LANES; k <<= 1u) t_stop = max(t_stop, subgroupShuffleXor(t_stop, k));
  const uint t0 = split * chunk;
  const int t1 = min(min(int(t0 + chunk), int(kv_length(bt))), t_stop + 1);
  for (int ti = int(t0); ti < t1; ++ti) {
    const uint t = uint(ti);
    const uint handle = key_handle(bt, t);
    float kr[DPL];
    load_key(bt, hk, handle, lane, kr);
    float dot = 0.0;
#define KV_DOT_FROM(src) for (uint j = 0u; j < DPL; ++j) dot += q[src][j] * subgroupShuffle(kr[j], base + src);
    FOR_EACH_LANE(KV_DOT_FROM)
    // Branch-free online softmax (lavapipe executes both sides of a branch): a key that is
    // masked or past the lane's last visible key has s = -inf and p = 0.
    const float s = ti <= last ? score(bt, row, head, t, dot) : uintBitsToFloat(0xff800000u);
    const float m_new = max(m, s);
    const bool none = m_new == uintBitsToFloat(0xff800000u);  // no visible key yet: rescale 1, p 0
    const float rescale = none ? 1.0 : exp(m - m_new);
    const float p = none ? 0.0 : exp(s - m_new);
    m = m_new;
    l = l * rescale + p;
    float vr[DPLV];
    load_value(bt, hk, handle, lane, vr);
    const float w = ATTENTION_PV_WEIGHT(p);
#define KV_ACC_FROM(src) for (uint j = 0u; j < DPLV; ++j) acc[src][j] = acc[src][j] * rescale + w * subgroupShuffle(vr[j], base + src);
    FOR_EACH_LANE(KV_ACC_FROM)
  }

  if (!has_vector) return;
  const uint slot = slot_base + (row * H + head) * nsplit + split;
  const uint first = slot * (DV + 2u);
  partials[first] = m;
  partials[first + 1u] = l;
  for (uint src = 0u; src < LANES; ++src)
    for (uint j = 0u; j < DPLV; ++j) partials[first + 2u + src * DPLV + j] = acc[src][j];
}

#endif
