// The attention kernel every attention operator shares (MHCA, SDPA, FIA): work items
// planned on the host (src/ops/attention/attention_plan.cpp), an online softmax per query
// vector over one split of the keys, and the partial state (max m, sum l, accumulator)
// written for shaders/attention_merge.comp to combine.
//
// One item = one batch b, one kv head hk, up to 8 query vectors that share it (the q heads
// of a GQA group, then consecutive rows; AttentionPlan::vectors_per_item), and one split
// [t0, t1) of the keys. Three bodies implement it over the same hooks:
// - attention_tiles.glsl (built with KVBENCH_TILES, the "gpu" kernel): one workgroup per
//   item, K/V tiles in shared memory, bounded state per invocation, no subgroup operation;
// - attention_decode.glsl (built with KVBENCH_TILES and KVBENCH_DECODE, the "decode"
//   kernel): one workgroup of 4 subgroups per item, each subgroup its own keys, a lane per
//   key for the scores and per V slice for P.V, no barrier in the key loop; GPUs' decodes;
// - attention_lanes.glsl (the "cpu" kernel): eight (or four) subgroup lanes per item, each
//   with a slice of every vector, exchanging partial dots and softmax weights by shuffles;
//   faster on lavapipe, limited to subgroups of >= 8 lanes and heads <= 256.
// src/ops/attention/attention_kernel.cpp chooses (specs/attention-kernels.md).
//
// The including shader declares its buffers, its `Params` (which must hold num_items,
// num_heads and num_kv_heads) and `struct Batch` (what its hooks need of one batch), then
// includes this file, then defines the hooks declared below. D, the head size of Q and K,
// is specialization constant 0; V's head size DV is D unless the including shader defines
// the macro DV first (FIA's 192/128 heads). The K/V hooks load one slice of DPL (DPLV)
// elements of a row, slice number `lane`: a lane's share of the row in the lanes kernel
// (D / 8 elements, consecutive unless ATTENTION_CYCLIC_KEYS, see key_dim), a fixed chunk
// of 8 consecutive elements in the tiles kernel.
#ifndef KVBENCH_ATTENTION_CORE_GLSL
#define KVBENCH_ATTENTION_CORE_GLSL
#include "grid.glsl"

// With D fixed at pipeline creation every loop over a row has a constant trip count, so
// lavapipe unrolls it and keeps the arrays in registers instead of scattering them to memory.
layout(constant_id = 0) const uint D = 128u;
#ifdef KVBENCH_TILES
const uint DPL = 8u;  // elements per slice: a chunk
#else
// Lanes, and query vectors, per item: 8, or 4 for decodes with G <= 4 at heads <= 128 over
// at least 32768 K rows (attention_vectors_per_item and kFourLanesMinKeyRows on the host).
layout(constant_id = 15) const uint LANES = 8u;
const uint DPL = D / LANES;  // dims per lane
#endif
// DPLV must be the very constant DPL when DV is D: glslang types float[D / 8] computed
// twice as two array types, so a hook declared with the other would be an overload and the
// prototype below would keep an empty body (outputs of zeros, measured).
#ifndef DV
#define DV D
#define DPLV DPL
#elif defined(KVBENCH_TILES)
#define DPLV DPL
#else
const uint DPLV_LANES = DV / LANES;
#define DPLV DPLV_LANES
#endif

// The dim of element j of K slice `slice`, which the query elements a lane holds follow.
// Slices are consecutive dims, [slice * DPL, +DPL), except in the lanes kernel of a shader
// that defines ATTENTION_CYCLIC_KEYS (a constant expression) true before including this file:
// lane l then holds dims l, l + LANES, l + 2 LANES, ... of Q and K (V's slices stay
// consecutive). FIA's MLA sets it: its dims from DQK on come from queryRope and keyRope, and
// with consecutive slices one lane straddles that boundary, so lavapipe compiled both loads
// for every element of every lane (specs/fused_infer_attention_score.md, "Vulkan").
#ifndef ATTENTION_CYCLIC_KEYS
#define ATTENTION_CYCLIC_KEYS false
#endif
#ifdef KVBENCH_TILES
uint key_dim(uint slice, uint j) { return slice * DPL + j; }
#else
uint key_dim(uint slice, uint j) { return ATTENTION_CYCLIC_KEYS ? j * LANES + slice : slice * DPL + j; }
#endif
// Whether element j of K slice `slice` has a dim of at least `first`: with cyclic slices
// and LANES dividing `first`, the same answer in every lane, known when the loop unrolls.
bool key_dim_from(uint slice, uint j, uint first) {
#ifndef KVBENCH_TILES
  if (ATTENTION_CYCLIC_KEYS && first % LANES == 0u) return j >= first / LANES;
#endif
  return key_dim(slice, j) >= first;
}

// Per batch: slot base, number of splits, split length. Per item: b, kv head, v0, nv, split.
layout(std430, binding = 28) readonly buffer BatchPlan { uint batch_plan[]; };
layout(std430, binding = 29) readonly buffer Items { uint items[]; };
layout(std430, binding = 30) writeonly buffer Partials { float partials[]; };

// The slot of query vector v's partial state (m, l, DV accumulators) for this split:
// slot base + (row * H + head) * splits + split, with row v / G and head hk * G + v % G.
uint partial_slot(uint slot_base, uint v, uint hk, uint G, uint H, uint nsplit, uint split) {
  return slot_base + ((v / G) * H + hk * G + v % G) * nsplit + split;
}
// Its first float.
uint partial_first(uint slot_base, uint v, uint hk, uint G, uint H, uint nsplit, uint split) {
  return partial_slot(slot_base, v, hk, G, H, nsplit, split) * (DV + 2u);
}

// Direct output, where the host turns it on (every vector of the plan has one split, so its
// state is final): the tiles kernel finishes its vectors itself
// (attention_finish.glsl) and write neither partial states nor leave work to a merge.
// Words 0-7: on, out_dtype, empty_zeros, has_lse, pq_per_channel, pq_offset, pq_dtype, has_sinks;
// then per slot (partial_slot) its output vector and lse index.
#include "attention_finish.glsl"
layout(std430, binding = 23) readonly buffer Direct { uint direct[]; };
bool direct_output() { return direct[0] != 0u; }
Finish direct_finish() { return Finish(DV, direct[1], direct[2], direct[3], direct[4], direct[5], direct[6], direct[7]); }
uvec2 direct_vector(uint slot) { return uvec2(direct[8u + 2u * slot], direct[9u + 2u * slot]); }

// The hooks.
Batch batch_info(uint b);
uint kv_length(Batch bt);
int last_key(Batch bt, uint row);  // last visible key of a query row (-1: none)
float query_at(Batch bt, uint row, uint head, uint d);  // element d of a query vector
// The lanes kernel's query element j of slice `slice`: query_at(key_dim(slice, j)), unless
// the including shader defines ATTENTION_QUERY_SLICE_AT first and this hook itself (FIA's
// MLA, where key_dim_from tells per unrolled element which tensor holds it).
#ifdef ATTENTION_QUERY_SLICE_AT
float query_slice_at(Batch bt, uint row, uint head, uint slice, uint j);
#else
float query_slice_at(Batch bt, uint row, uint head, uint slice, uint j) {
  return query_at(bt, row, head, key_dim(slice, j));
}
#endif
// Where key t lives, as two words the operator defines (its cache row; FIA's token and
// page-attention slot), computed once per key and passed to each of its K and V loads: a
// page-table read and a division per key, not per load (the decode kernel loads a row in
// D / 8 calls, and lavapipe gathers every table read lane by lane).
uvec2 key_handle(Batch bt, uint t);
void load_key(Batch bt, uint hk, uvec2 handle, uint lane, out float k[DPL]);     // elements key_dim(lane, j)
void load_value(Batch bt, uint hk, uvec2 handle, uint lane, out float v[DPLV]);  // elements [lane*DPLV, +DPLV)
float score(Batch bt, uint row, uint head, uint t, float dot);  // the final score; -inf: masked
// The weight of a key's V in P.V given its p = exp(s - running max): p itself unless the
// including shader defines ATTENTION_PV_WEIGHT first (FIA's full int8 quantizes it). The
// softmax sum l always adds the unquantized p.
#ifndef ATTENTION_PV_WEIGHT
#define ATTENTION_PV_WEIGHT(p) (p)
#endif
// The lanes and decode kernels call item_begin(bt, hk, lane, v_lane) once per item, before
// their key loops, when the including shader defines ATTENTION_ITEM_BEGIN first: what every
// key's K slice `lane` and V slice `v_lane` need (FIA's per-channel antiquant scales) is
// then loaded once, not once per key (the lanes kernel's slices are the lane's; the decode
// kernel's V slice is its P.V lane's, its K slices change within a row).
#ifdef ATTENTION_ITEM_BEGIN
void item_begin(Batch bt, uint hk, uint lane, uint v_lane);
#endif

#if defined(KVBENCH_DECODE)
#include "attention_decode.glsl"
#elif defined(KVBENCH_TILES)
#include "attention_tiles.glsl"
#else
#include "attention_lanes.glsl"
#endif

#endif
