#include <memory>

#include "ops/fused_infer_attention/fused_infer_attention.hpp"
#include "ops/ggml/ggml_ops.hpp"
#include "ops/key_value_cache/key_value_cache.hpp"
#include "ops/multi_head_cache_attention/multi_head_cache_attention.hpp"
#include "ops/operator.hpp"
#include "ops/quantize_group/quantize_group.hpp"
#include "ops/reshape_and_cache/reshape_and_cache.hpp"
#include "ops/sdpa_compressed_kv/sdpa_compressed_kv.hpp"

namespace kvbench {
namespace {

const std::vector<std::unique_ptr<Operator>>& registry() {
  static const auto ops = [] {
    std::vector<std::unique_ptr<Operator>> v;
    v.push_back(make_key_value_cache_operator());
    v.push_back(make_multi_head_cache_attention_operator());
    v.push_back(make_quantize_group_operator());
    v.push_back(make_dequantize_group_operator());
    v.push_back(make_reshape_and_cache_omni_operator());
    v.push_back(make_reshape_and_cache_operator());
    v.push_back(make_sdpa_compressed_kv_operator());
    v.push_back(make_fused_infer_attention_operator());
    v.push_back(make_ggml_flash_attn_ext_operator());
    v.push_back(make_ggml_get_rows_operator());
    v.push_back(make_ggml_set_rows_operator());
    return v;
  }();
  return ops;
}

}  // namespace

const Operator* find_operator(const std::string& id) {
  for (const auto& op : registry())
    if (op->id() == id) return op.get();
  return nullptr;
}

std::vector<const Operator*> operators() {
  std::vector<const Operator*> v;
  for (const auto& op : registry()) v.push_back(op.get());
  return v;
}

std::vector<std::string> operator_ids() {
  std::vector<std::string> ids;
  for (const auto& op : registry()) ids.push_back(op->id());
  return ids;
}

}  // namespace kvbench
