#pragma once
#include <memory>

#include "ops/operator.hpp"

namespace kvbench {

// kvbench.QuantizeGroup and kvbench.DequantizeGroup (specs/quantize-group.md): the group
// quantizers every KV-cache operator reuses, exposed on their own.
std::unique_ptr<Operator> make_quantize_group_operator();
std::unique_ptr<Operator> make_dequantize_group_operator();

}  // namespace kvbench
