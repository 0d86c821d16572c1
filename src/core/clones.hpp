#pragma once
// KVB_CLONES: a hot loop's function gets an AVX2 clone, picked at run time on CPUs that have
// it (GCC's target_clones). No FMA: every product is rounded before its addition, as
// -ffp-contract=off asks of the scalar code, so both clones give the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KVB_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KVB_CLONES
#endif
