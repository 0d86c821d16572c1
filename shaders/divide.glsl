// t / d and t % d for a run-time divisor d without an integer division: x86 has no vector
// integer division, so lavapipe divides a vector lane by lane (a block-table lookup per key
// measured 10 % of FIA's 8k decode), and on GPUs a division is a sequence of some 20
// instructions. magic = floor((2^32 - 1) / d) (division_magic() on the host, d >= 1): the
// high word of t * magic is floor(t / d) or one less whenever t < 2^32 / d, and one
// comparison corrects it. Checked on the device against t / d (tests/test_runtime.cpp).
#ifndef KVBENCH_DIVIDE_GLSL
#define KVBENCH_DIVIDE_GLSL

// (t / d, t % d) for t < 2^32 / d.
uvec2 divide_by_magic(uint t, uint d, uint magic) {
  uint q, lo;
  umulExtended(t, magic, q, lo);
  const uint r = t - q * d;
  return r >= d ? uvec2(q + 1u, r - d) : uvec2(q, r);
}

#endif
