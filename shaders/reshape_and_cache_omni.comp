#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#include "grid.glsl"
// atb.ReshapeAndCacheOmni: one invocation per (token, head). The token is kept unless its
// head's run is compressed and it falls in the dropped window [off, off + wins); the k-th
// kept token of run i goes to flat slot slot_mapping[i] + k. A pure copy of head_size elements.
#include "storage.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Key { uint key[]; };
layout(std430, binding = 1) readonly buffer Value { uint value[]; };
layout(std430, binding = 2) buffer KeyCache { uint key_cache[]; };
layout(std430, binding = 3) buffer ValueCache { uint value_cache[]; };
layout(std430, binding = 4) readonly buffer SlotMapping { int slot_mapping[]; };
layout(std430, binding = 5) readonly buffer Wins { int wins[]; };
layout(std430, binding = 6) readonly buffer OffsetIndex { int offsetIndex[]; };
layout(std430, binding = 7) readonly buffer TokenStarts { uint token_starts[]; };  // prefix sums of seqLen

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint num_tokens, num_head, batches, row_words;  // row_words: 32-bit words per head_size row
} pc;

void main() {
  const uint id = grid_invocation();  // large launches are a 2-D grid
  if (id >= pc.num_tokens * pc.num_head) return;
  const uint n = id / pc.num_head, h = id % pc.num_head;
  uint lo = 0u, hi = pc.batches;
  while (hi - lo > 1u) {
    const uint mid = (lo + hi) / 2u;
    if (token_starts[mid] <= n) lo = mid; else hi = mid;
  }
  const uint b = lo;
  const int j = int(n - token_starts[b]);
  const uint i = b * pc.num_head + h;
  const int slot = slot_mapping[i];
  if (slot < 0) return;  // kvbench's convention (specs/reshape_and_cache.md): the run is skipped
  const int off = offsetIndex[i], w = wins[i];
  const bool compressed = off != -1 && w != 0;
  if (compressed && j >= off && j < off + w) return;  // dropped
  const uint s = uint(slot + ((compressed && j >= off + w) ? j - w : j));
  const uint src = id * pc.row_words, dst = s * pc.row_words;
  for (uint k = 0u; k < pc.row_words; ++k) {
    key_cache[dst + k] = key[src + k];
    value_cache[dst + k] = value[src + k];
  }
}
