#pragma once
#include <memory>

#include "ops/operator.hpp"

namespace kvbench {

std::unique_ptr<Operator> make_ggml_get_rows_operator();
std::unique_ptr<Operator> make_ggml_set_rows_operator();
std::unique_ptr<Operator> make_ggml_flash_attn_ext_operator();

}  // namespace kvbench
