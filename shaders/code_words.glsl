// For the device tests of the code conversions (dequant_selftest.comp and
// dequant_f16_selftest.comp): a word of packed codes with `code` at position e (bits 8 or 4)
// and, at every other position, a pattern that differs from it.
#ifndef KVBENCH_CODE_WORDS_GLSL
#define KVBENCH_CODE_WORDS_GLSL

uint word_with(uint code, uint e, uint bits) {
  const uint mask = ((1u << bits) - 1u) << (e * bits);
  return ((code << (e * bits)) & mask) | ((code * 0x9e3779b9u + 0x7f4a7c15u) & ~mask);
}

#endif
