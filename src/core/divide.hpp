#pragma once
// The host side of shaders/divide.glsl: division by a run-time divisor as a multiply-high and
// one correction, for shaders on devices without vector integer division (lavapipe on x86).
#include <cstdint>

namespace kvbench {

// divide_by_magic's multiplier for divisor d >= 1: floor((2^32 - 1) / d).
inline uint32_t division_magic(uint32_t d) { return UINT32_C(0xffffffff) / d; }

// Whether divide_by_magic is exact for every dividend below `limit` with divisor d: t < 2^32 / d.
inline bool division_magic_covers(uint64_t limit, uint32_t d) {
  return d >= 1 && limit <= (uint64_t{1} << 32) / d;
}

}  // namespace kvbench
