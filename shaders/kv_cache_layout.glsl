// Element offsets of pmx.KeyValueCache's cache and scale tensors (specs/key_value_cache.md):
//   layout 0: (MaxB, L, 2, MaxS, H, D)     layout 1: (L, MaxB, 2, H, MaxS, D)
// `D` is head_dim for the cache and head_dim / quant_group for the scale.
#ifndef KVBENCH_KV_CACHE_LAYOUT_GLSL
#define KVBENCH_KV_CACHE_LAYOUT_GLSL

uint kv_cache_row(uint cache_layout, uint b, uint l, uint kv, uint t, uint h,
                  uint max_b, uint num_layer, uint max_s, uint heads, uint D) {
  if (cache_layout == 0u) return ((((b * num_layer + l) * 2u + kv) * max_s + t) * heads + h) * D;
  return ((((l * max_b + b) * 2u + kv) * heads + h) * max_s + t) * D;
}

#endif
