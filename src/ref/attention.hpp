#pragma once
// Double-precision building blocks of attention references.
#include <cstdint>
#include <vector>

namespace kvbench {

// ALiBi slopes for n heads (BLOOM's rule, PMX ALiBiSlope): with c = 2^floor(log2 n),
// slope_k = 2^(-8k/c) for k = 1..c, then 2^(-4k/c) for odd k = 1, 3, ..., 2(n-c)-1.
std::vector<double> alibi_slopes(int64_t n);

// softmax over scores that may hold -inf: exp(s - max) / sum. A row whose scores are all
// -inf gives NaN, as torch.softmax does.
std::vector<double> softmax(const std::vector<double>& scores);

}  // namespace kvbench
