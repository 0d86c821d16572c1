#pragma once
// The attention reference's inner tiles (internal to ref/attention_phases.cpp): q . k over
// panels of keys, P @ V (and the bound's p . |V|) over strips of values, in vectors. Every
// lane is one IEEE product and one sum in a fixed order, so neither the vector width nor
// the instruction set changes a bit of a result (specs/comparison.md).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "ref/attention_phases.hpp"

namespace kvbench::attention_phases::tiles {

// Four doubles in one vector (GCC/Clang vector extensions): every lane is an independent
// IEEE operation, so the width changes the speed, never a result. Loads and stores of
// unaligned data go through the may_alias, 8-byte aligned type.
typedef double V4 __attribute__((vector_size(32)));
typedef double V4u __attribute__((vector_size(32), aligned(8), may_alias));

#define KVB_INLINE inline __attribute__((always_inline))

// Macros, not functions: a function taking or returning a 32-byte vector would have a
// different ABI in the AVX2 clone (-Wpsabi).
#define load4(p) (*reinterpret_cast<const V4u*>(p))
#define store4(p, x) (*reinterpret_cast<V4u*>(p) = (x))

// The wide tiles: with AVX-512 (x86-64-v4, picked at run time), one 8-column strip is one
// vector and its 32 registers hold R = 4 rows' sums of both P . V and p . |V|; AVX2 has 16
// and takes the strip in two halves (below). Every lane is the same IEEE product and sum in
// the same key order either way (no FMA), so the width changes the speed, never a bit.
// KVBENCH_REF_NO_AVX512 set (to anything) keeps the AVX2 tiles, to time or compare them.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KVB_WIDE_TILES 1
typedef double V8 __attribute__((vector_size(64)));
typedef double V8u __attribute__((vector_size(64), aligned(8), may_alias));
typedef int64_t I8 __attribute__((vector_size(64)));
#define load8(p) (*reinterpret_cast<const V8u*>(p))
#define store8(p, x) (*reinterpret_cast<V8u*>(p) = (x))
#define abs8(x) ((V8)((I8)(x) & (I8{} + std::numeric_limits<int64_t>::max())))

static_assert(kPanel == 8, "a panel and a strip are one AVX-512 vector");
// Set at static initialization, which may run before libgcc's: __builtin_cpu_init() first.
inline const bool kWideTiles = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("x86-64-v4") && !std::getenv("KVBENCH_REF_NO_AVX512");
}();

// out[r][c] += p * v (and, with w, w[r][c] += p * |v|) for the strips' columns [0, dv / 8 * 8).
template <int R, bool Abs>
__attribute__((target("arch=x86-64-v4"), noinline)) void value_strips8(const double* const* p, int64_t origin,
                                                                       const Strips& V, int64_t t0,
                                                                       int64_t t1, int64_t dv,
                                                                       double* const* out, double* const* w) {
  for (int64_t c = 0; c + 8 <= dv; c += 8) {
    V8 a[R], m[R];
    for (int r = 0; r < R; ++r) {
      a[r] = load8(out[r] + c);
      if constexpr (Abs) m[r] = load8(w[r] + c);
    }
    const double* vt = V.strip(c / 8) + (t0 - V.k0) * 8;
    for (int64_t t = t0; t < t1; ++t, vt += 8) {
      const V8 v = load8(vt);
      for (int r = 0; r < R; ++r) {
        const V8 y = p[r][t - origin] * v;
        a[r] = a[r] + y;
        if constexpr (Abs) m[r] = m[r] + abs8(y);
      }
    }
    for (int r = 0; r < R; ++r) {
      store8(out[r] + c, a[r]);
      if constexpr (Abs) store8(w[r] + c, m[r]);
    }
  }
}

// score_tile over two panels at once (p and p + 1, contiguous in K), one vector a panel:
// eight running sums, enough to hide the additions' latency; s[r] + kPanel is panel p + 1's.
inline __attribute__((target("arch=x86-64-v4"), noinline)) void score_tile_pair8(const double* const* q,
                                                                                 const double* panel,
                                                                                 int64_t dk,
                                                                                 double* const* s) {
  V8 a0[kMr] = {}, a1[kMr] = {};
  const double* next = panel + dk * kPanel;
  for (int64_t d = 0; d < dk; ++d) {
    const V8 k0 = load8(panel + d * kPanel), k1 = load8(next + d * kPanel);
    for (int r = 0; r < kMr; ++r) {
      const double x = q[r][d];
      a0[r] = a0[r] + x * k0;
      a1[r] = a1[r] + x * k1;
    }
  }
  for (int r = 0; r < kMr; ++r) {
    store8(s[r], a0[r]);
    store8(s[r] + kPanel, a1[r]);
  }
}
#else
inline constexpr bool kWideTiles = false;
#endif

// s[r][0, kPanel) = q[r] . (keys of one panel): per lane 0 + q[0]k[0] + q[1]k[1] + ... in
// ascending d, each product rounded then added.
KVB_INLINE void score_tile(const double* const* q, const double* panel, int64_t dk, double* const* s) {
  V4 a0[kMr] = {}, a1[kMr] = {};
  for (int64_t d = 0; d < dk; ++d) {
    const V4 k0 = load4(panel + d * kPanel), k1 = load4(panel + d * kPanel + 4);
    for (int r = 0; r < kMr; ++r) {
      const double x = q[r][d];
      a0[r] = a0[r] + x * k0;
      a1[r] = a1[r] + x * k1;
    }
  }
  for (int r = 0; r < kMr; ++r) {
    store4(s[r], a0[r]);
    store4(s[r] + 4, a1[r]);
  }
}

// |x| of each lane: the sign bit cleared, as std::fabs does.
typedef int64_t I4 __attribute__((vector_size(32)));
#define abs4(x) ((V4)((I4)(x) & (I4{} + std::numeric_limits<int64_t>::max())))

// The bound's fused tile: out[r][c] += p * v and w[r][c] += p * |v| for t in [t0, t1) in
// ascending order, so each sum and its order are those of value_tile over V and over |V|.
// Without AVX-512 four columns at a time (eight would take more vector registers than AVX2
// has).
template <int R>
KVB_INLINE void value_tile_abs(const double* const* p, int64_t origin, const Strips& V, int64_t t0,
                               int64_t t1, int64_t dv, double* const* out, double* const* w) {
  int64_t c = 0;
#ifdef KVB_WIDE_TILES
  if (kWideTiles) {
    value_strips8<R, true>(p, origin, V, t0, t1, dv, out, w);
    c = dv / 8 * 8;
  }
#endif
  for (; c < dv / 8 * 8; c += 4) {
    V4 a[R], m[R];
    for (int r = 0; r < R; ++r) {
      a[r] = load4(out[r] + c);
      m[r] = load4(w[r] + c);
    }
    const double* vt = V.strip(c / 8) + (t0 - V.k0) * 8 + c % 8;
    for (int64_t t = t0; t < t1; ++t, vt += 8) {
      const V4 v = load4(vt);
      for (int r = 0; r < R; ++r) {
        // p >= 0, so |p * v| rounds to the very p * |v| of a pass over |V| (both NaN where p
        // or v is): one multiplication for both sums.
        const V4 y = p[r][t - origin] * v;
        a[r] = a[r] + y;
        m[r] = m[r] + abs4(y);
      }
    }
    for (int r = 0; r < R; ++r) {
      store4(out[r] + c, a[r]);
      store4(w[r] + c, m[r]);
    }
  }
  for (; c < dv; ++c)
    for (int r = 0; r < R; ++r) {
      double acc = out[r][c], mag = w[r][c];
      for (int64_t t = t0; t < t1; ++t) {
        const double y = p[r][t - origin] * V.tail_at(t, c - dv / 8 * 8);
        acc += y;
        mag += std::fabs(y);
      }
      out[r][c] = acc;
      w[r][c] = mag;
    }
}

// out[r][c] += p[r][t - origin] * v[t][c] for t in [t0, t1) in ascending order, for R rows
// and the columns [0, dv): eight at a time in vectors, the rest one by one. With w (the
// bound's sums of p * |v|, or null), value_tile_abs.
template <int R>
KVB_INLINE void value_tile(const double* const* p, int64_t origin, const Strips& V, int64_t t0, int64_t t1,
                           int64_t dv, double* const* out, double* const* w = nullptr) {
  if (w) return value_tile_abs<R>(p, origin, V, t0, t1, dv, out, w);
  int64_t c = 0;
#ifdef KVB_WIDE_TILES
  if (kWideTiles) {
    value_strips8<R, false>(p, origin, V, t0, t1, dv, out, nullptr);
    c = dv / 8 * 8;
  }
#endif
  for (; c + 8 <= dv; c += 8) {
    V4 a0[R], a1[R];
    for (int r = 0; r < R; ++r) {
      a0[r] = load4(out[r] + c);
      a1[r] = load4(out[r] + c + 4);
    }
    const double* vt = V.strip(c / 8) + (t0 - V.k0) * 8;
    for (int64_t t = t0; t < t1; ++t, vt += 8) {
      const V4 v0 = load4(vt), v1 = load4(vt + 4);
      for (int r = 0; r < R; ++r) {
        const double x = p[r][t - origin];
        a0[r] = a0[r] + x * v0;
        a1[r] = a1[r] + x * v1;
      }
    }
    for (int r = 0; r < R; ++r) {
      store4(out[r] + c, a0[r]);
      store4(out[r] + c + 4, a1[r]);
    }
  }
  for (; c < dv; ++c)
    for (int r = 0; r < R; ++r) {
      double acc = out[r][c];
      for (int64_t t = t0; t < t1; ++t) acc += p[r][t - origin] * V.tail_at(t, c - dv / 8 * 8);
      out[r][c] = acc;
    }
}

}  // namespace kvbench::attention_phases::tiles
