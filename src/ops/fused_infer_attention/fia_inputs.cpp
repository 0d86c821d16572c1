// aclnn.FusedInferAttentionScoreV3: where the elements of K/V and their antiquant scales
// are, and the quantized K/V the conformance cases run on (spec "Inputs").
#include "ops/fused_infer_attention/fia_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/rng.hpp"
#include "ref/quant.hpp"

namespace kvbench {

std::vector<int64_t> fia_block_table(const FiaParams& p, uint64_t seed) {
  std::vector<int64_t> ids(static_cast<size_t>(p.num_blocks));
  std::iota(ids.begin(), ids.end(), 0);
  const CounterRng rng(seed, "blockTable");
  for (size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[static_cast<size_t>(rng.integer(i, 0, static_cast<int64_t>(i) - 1))]);
  const int64_t spare = ids.back();
  std::vector<int64_t> table(static_cast<size_t>(p.B * p.max_blocks), spare);
  size_t next = 0;
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t k = 0; k * p.block_size < p.s2b[b]; ++k) table[b * p.max_blocks + k] = ids[next++];
  return table;
}

int64_t fia_cache_index(const FiaParams& p, int64_t blk, int64_t r, int64_t hk, int64_t d, int64_t dim) {
  return p.bnnbsd ? ((blk * p.Nkv + hk) * p.block_size + r) * dim + d : ((blk * p.block_size + r) * p.Nkv + hk) * dim + d;
}

int64_t fia_kv_index(const FiaParams& p, const std::vector<int64_t>& table, int64_t b, int64_t t, int64_t hk, int64_t d,
                     int64_t dim) {
  if (!p.paged()) return p.kv_strides(dim).at(b, p.kv_start[b] + t, hk, d);
  return fia_cache_index(p, table[b * p.max_blocks + t / p.block_size], t % p.block_size, hk, d, dim);
}

FiaSide fia_side(const FiaParams& p, int side) {
  FiaSide s;
  s.data = side == 0 ? "key" : "value";
  s.scale = side == 0 ? "keyAntiquantScale" : "valueAntiquantScale";
  s.offset = side == 0 ? "keyAntiquantOffset" : "valueAntiquantOffset";
  s.dim = side == 0 ? p.D : p.Dv;
  s.mode = side == 0 ? p.quant.key_mode : p.quant.value_mode;
  if (p.quant.combined) {
    s.scale = "antiquantScale";
    s.offset = "antiquantOffset";
    s.base = side * static_cast<int64_t>(shape_numel(p.combined_antiquant_shape()) / 2);
  }
  return s;
}

void fia_for_each_kv(const FiaParams& p, const std::vector<int64_t>& table, int side,
                     const std::function<void(int64_t element, int64_t scale_index)>& f) {
  const FiaSide s = fia_side(p, side);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t t = 0; t < p.s2b[b]; ++t) {
      const int64_t blk = p.paged() ? table[b * p.max_blocks + t / p.block_size] : 0, r = p.paged() ? t % p.block_size : 0;
      for (int64_t hk = 0; hk < p.Nkv; ++hk)
        for (int64_t d = 0; d < s.dim; ++d)
          f(fia_kv_index(p, table, b, t, hk, d, s.dim), p.antiquant_index(s.mode, s.dim, b, p.kv_start[b] + t, hk, d, blk, r));
    }
}

std::vector<double> fia_originals(const FiaParams& p, const Args& a, int side) {
  const FiaSide s = fia_side(p, side);
  const auto range = a.range(s.data);
  const CounterRng rng(a.seed(), s.data + "_unquantized");
  std::vector<double> x(shape_numel(p.kv_shape(s.dim)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = round_to(p.q, rng.uniform(i, range.first, range.second));
  return x;
}

Tensor fia_combined_antiquant(const FiaParams& p, const Args& a, const std::string& name) {
  Tensor t(name, p.antiquant_dtype(p.quant.key_mode), p.combined_antiquant_shape(), Role::input);
  size_t k = 0;
  for (int side = 0; side < 2; ++side) {
    const Tensor part = fia_quantized(p, a, side).at(name);
    for (size_t i = 0; i < part.numel(); ++i) t.set(k++, part.get(i));
  }
  return t;
}

TensorSet fia_quantized(const FiaParams& p, const Args& a, int side) {
  const FiaSide s = fia_side(p, side);
  const std::vector<int64_t> table = p.paged() ? fia_block_table(p, a.seed()) : std::vector<int64_t>{};
  const std::vector<double> x = fia_originals(p, a, side);
  const Shape sshape = p.antiquant_shape(s.mode, s.dim);
  const DType sdt = p.antiquant_dtype(s.mode);
  const size_t groups = shape_numel(sshape);
  // Each scale's range over the elements it serves.
  std::vector<double> lo(groups, 0.0), hi(groups, 0.0);
  std::vector<uint8_t> used(groups, 0);
  fia_for_each_kv(p, table, side, [&](int64_t e, int64_t g) {
    lo[g] = std::min(lo[g], x[e]);
    hi[g] = std::max(hi[g], x[e]);
    used[g] = 1;
  });
  const double qmin = static_cast<double>(dtype_int_min(p.quant.codes)), qmax = static_cast<double>(dtype_int_max(p.quant.codes));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor data(s.data, p.quant.codes, p.kv_shape(s.dim), Role::input);
  Tensor scale(s.scale, sdt, sshape, Role::input), offset(s.offset, sdt, sshape, Role::input);
  for (size_t g = 0; g < groups; ++g) {
    // A scale no element uses is NaN: a kernel that applies it fails.
    if (!used[g]) {
      scale.set(g, nan);
      offset.set(g, nan);
      continue;
    }
    double sc, off = 0;
    if (p.quant.offset) {  // x ~ (code + offset) * scale, codes spanning [qmin, qmax]
      sc = std::max(round_to(sdt, (hi[g] - lo[g]) / (qmax - qmin)), round_to(sdt, 1e-4));
      off = round_to(sdt, std::nearbyint(lo[g] / sc) - qmin);
    } else {
      sc = std::max(round_to(sdt, std::max(hi[g], -lo[g]) / qmax), round_to(sdt, 1e-4));
    }
    scale.set(g, sc);
    offset.set(g, off);
  }
  fia_for_each_kv(p, table, side, [&](int64_t e, int64_t g) {
    data.set(static_cast<size_t>(e), std::clamp(std::nearbyint(x[e] / scale.get(g)) - offset.get(g), qmin, qmax));
  });
  TensorSet ts;
  ts.tensors.push_back(std::move(data));
  ts.tensors.push_back(std::move(scale));
  if (p.quant.offset) ts.tensors.push_back(std::move(offset));
  return ts;
}

}  // namespace kvbench
