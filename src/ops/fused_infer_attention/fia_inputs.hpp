#pragma once
// aclnn.FusedInferAttentionScoreV3: the quantized K/V of KV antiquant cases, made from
// values drawn in the tensor's range (spec "Inputs").
#include <functional>
#include <string>
#include <vector>

#include "ops/fused_infer_attention/fia_params.hpp"
#include "ops/operator.hpp"

namespace kvbench {

// The tensor names, head size and antiquant mode of K (side 0) or V (side 1).
struct FiaSide {
  std::string data, scale, offset;
  int64_t dim = 0;
  int mode = 0;
  int64_t base = 0;  // first element of the side's scales in the (combined) scale tensor
};
FiaSide fia_side(const FiaParams& p, int side);

// Calls f(element of K/V, element of its scale) for every key token a batch reads.
void fia_for_each_kv(const FiaParams& p, const std::vector<int64_t>& table, int side,
                     const std::function<void(int64_t element, int64_t scale_index)>& f);

// The unquantized K or V in the query's dtype, one value per element of the K/V tensor.
std::vector<double> fia_originals(const FiaParams& p, const Args& a, int side);

// The codes, scale and offset (with antiquant_offset) of one side, quantized from the
// originals per scale group: symmetric scale = max|x| / qmax, or asymmetric over
// [min, max] with an integer offset, both in the scale's dtype.
TensorSet fia_quantized(const FiaParams& p, const Args& a, int side);
// The combined antiquantScale or antiquantOffset: the key's scales, then the value's.
Tensor fia_combined_antiquant(const FiaParams& p, const Args& a, const std::string& name);

}  // namespace kvbench
