// Element access for tensors of any kvbench dtype held in plain uint word buffers.
//
// Every tensor is bound as `uint words[]`, so one shader serves every dtype (the dtype is
// a kernel parameter) and no 8/16-bit storage feature is needed. Narrow elements (4, 8 and
// 16 bits) are written with an atomicAnd/atomicOr pair on their own bits only, so
// neighbours in the same word -- another invocation's element, or cache bytes the
// operator must not touch -- are never disturbed. Packing follows src/core/dtype.hpp:
// element i occupies bits [i*n, i*n+n) of the little-endian byte stream (so s4/u4 put
// the even element in the low nibble).

#ifndef KVBENCH_STORAGE_GLSL
#define KVBENCH_STORAGE_GLSL

// DT_F32 ... : the codes of enum class DType (src/core/dtype.hpp), generated from its table.
#include "dtype_codes.glsl"

uint dtype_bits(uint dt) {
  if (dt == DT_F32 || dt == DT_I32) return 32u;
  if (dt == DT_F16 || dt == DT_BF16) return 16u;
  if (dt == DT_S4 || dt == DT_U4 || dt == DT_F4E2M1 || dt == DT_F4E1M2) return 4u;
  return 8u;
}

// The word holding element i of an n-bit dtype (n = 4, 8, 16 or 32), and the element's
// first bit in it. The word is i / (32 / n), never (i * n) / 32: the bit offset i * n
// overflows 32 bits from 512 MiB of tensor on, the element index only from 2^32
// elements (such cases are skipped before they run). The shift needs only the low five
// bits of i * n, which wrapping keeps.
#define WORD_OF(i, n) ((i) >> (5u - uint(findMSB(n))))
#define SHIFT_OF(i, n) (((i) * (n)) & 31u)

// Raw bits of element i (n bits wide) of word buffer `buf`: one word load for every n,
// 32 included (the mask 0xffffffff >> (32 - n) is all ones there, and 1u << 32 is never
// formed). Not `n == 32 ? buf[i] : ...`: with n a run-time value lavapipe performs the
// loads of both sides, and each per-lane load is a gather that LLVM compiles separately;
// the two-sided form doubled the compile time of the attention kernels.
#define LOAD_BITS(buf, i, n) ((buf[WORD_OF((i), (n))] >> SHIFT_OF((i), (n))) & (0xffffffffu >> (32u - (n))))

// Writes the low n bits of v as element i, leaving every other bit of the word intact.
#define STORE_BITS(buf, i, n, v)                           \
  {                                                        \
    const uint idx_ = (i);                                 \
    const uint n_ = (n);                                   \
    if (n_ == 32u) {                                       \
      buf[idx_] = (v);                                     \
    } else {                                               \
      const uint word_ = WORD_OF(idx_, n_);                \
      const uint shift_ = SHIFT_OF(idx_, n_);              \
      const uint mask_ = ((1u << n_) - 1u) << shift_;      \
      atomicAnd(buf[word_], ~mask_);                       \
      atomicOr(buf[word_], ((v) << shift_) & mask_);       \
    }                                                      \
  }

// Sign-extends an n-bit two's complement value.
int sign_extend(uint v, uint n) { return int(v << (32u - n)) >> (32u - n); }

// The integer an element of integer dtype dt with raw bits `bits` holds.
int decode_int(uint bits, uint dt) {
  return (dt == DT_U8 || dt == DT_U4) ? int(bits) : sign_extend(bits, dtype_bits(dt));
}

#endif
