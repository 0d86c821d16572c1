#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// A test of storage.glsl's element addressing at indices whose bit offsets pass 2^32
// (tensors over 512 MiB), which no buffer on lavapipe is large enough to hold: for each
// element index, the word and shift WORD_OF / SHIFT_OF give for 4-, 8- and 16-bit dtypes.
// And LOAD_BITS with its width a run-time value, as the kernels use it: element k of
// `source` for k < loads. Used by tests/test_runtime.cpp only.
#include "storage.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Indices { uint indices[]; };
layout(std430, binding = 1) writeonly buffer Words { uint words[]; };  // per index: 3 x (word, shift)
layout(std430, binding = 2) readonly buffer Source { uint source[]; };
layout(std430, binding = 3) writeonly buffer Loaded { uint loaded[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint count, loads, width;
} pc;

void main() {
  const uint k = gl_GlobalInvocationID.x;
  if (k < pc.loads) loaded[k] = LOAD_BITS(source, k, pc.width);
  if (k >= pc.count) return;
  const uint i = indices[k];
  for (uint b = 0u; b < 3u; ++b) {
    const uint n = 4u << b;
    words[6u * k + 2u * b] = WORD_OF(i, n);
    words[6u * k + 2u * b + 1u] = SHIFT_OF(i, n);
  }
}
