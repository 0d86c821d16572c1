#pragma once
// KVB_CLONES: a hot loop's function gets an AVX2 clone, picked at run time on CPUs that have
// it (GCC's target_clones). No FMA: every product is rounded before its addition, as
// -ffp-contract=off asks of the scalar code, so both clones give the same bits.
// KVB_CLONES_AVX512: also an x86-64-v4 (AVX-512) clone, for a loop of 64-bit integer work
// that AVX2 lacks instructions for (the FP8 encoder: 64-bit shifts, minima and narrowing
// stores; 3x AVX2's speed; and the E4M3FN decoder beside it). Integer and rounded
// floating-point steps only: the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KVB_CLONES __attribute__((target_clones("avx2", "default")))
#define KVB_CLONES_AVX512 __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define KVB_CLONES
#define KVB_CLONES_AVX512
#endif
