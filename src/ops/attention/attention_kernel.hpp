#pragma once
// Runs the shared attention kernel (an operator's shader built on attention_core.glsl)
// and the shared merge for one planned case.
#include "core/dtype.hpp"
#include "ops/attention/attention_plan.hpp"
#include "ref/attention.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

struct AttentionLaunch {
  Kernel kernel;          // the operator's attention shader, D (of Q and K) as specialization constant 0
  KernelBuffers buffers;  // the operator's bindings; the plan's are added
  KernelParams params;    // the operator's parameters; num_items is added
  Buffer* out = nullptr;  // the output tensor: [vectors in the plan's order, head_dim]
  Buffer* lse = nullptr;  // the log-sum-exp of each vector at the plan's lse index (optional)
  // An i8 output is post-quantized with these (shaders/attention_merge.comp).
  struct PostQuant {
    Buffer* scale = nullptr;
    Buffer* offset = nullptr;  // optional
    bool per_channel = false;
    DType dtype = DType::f32;
  } post_quant;
  DType out_dtype = DType::f16;
  int64_t head_dim = 0;   // of V and the output
  EmptyRow empty = EmptyRow::zeros;
};

// Throws SkipCase unless `dev` can run the shared kernel with these head sizes (of Q/K and
// of V): subgroups of at least 8 lanes with shuffles, sizes multiples of 8 up to 256
// (above 256 the per-lane arrays of 4 query vectors and accumulators gave wrong results
// on lavapipe, measured at 512).
void check_attention_device(const DeviceInfo& dev, int64_t key_dim, int64_t value_dim);

// Records both dispatches (attention, then merge) and the plan's uploads in `batch`.
void run_attention(Batch& batch, const AttentionPlan& plan, AttentionLaunch launch);

}  // namespace kvbench
