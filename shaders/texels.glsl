// Uniform texel buffers: a tensor bound a second time as `uniform usamplerBuffer
// NAME_texels` (src/vk/spirv_reflect.hpp) is read 16 bytes a texel. On lavapipe a
// storage-buffer load compiles into a loop over the lanes with a branch per lane and a
// bounds check per component, a texel fetch into one branch-free gather of whole texels
// (specs/runtime.md "Texel buffers"). The host sets a shader's constant for this path only
// when each view covers its whole tensor (Runtime::texels_cover).
#ifndef KVBENCH_TEXELS_GLSL
#define KVBENCH_TEXELS_GLSL

// Words [w, w + n) of the tensor behind `view`, in the first n components, for n = 1, 2
// or 4 and w a multiple of n: they lie in one texel, so one fetch reads them. n is a
// constant at every call, so only its own selects remain.
uvec4 texel_words(usamplerBuffer view, uint w, uint n) {
  const uvec4 t = texelFetch(view, int(w / 4u));
  if (n == 4u) return t;
  if (n == 2u) return (w & 2u) != 0u ? t.zwzw : t;
  const uint i = w & 3u;
  return uvec4(i < 2u ? (i == 0u ? t.x : t.y) : (i == 2u ? t.z : t.w));
}

#endif
