// The choice between the three attention kernels (src/ops/attention/attention_kernel.cpp),
// the gpu kernel's limits, and the NaN-filled partial states that expose a hole in a plan.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/attention/attention_plan.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

namespace {

DeviceInfo device(const std::string& type, uint32_t subgroup, bool shuffle = true) {
  DeviceInfo d;
  d.name = "test device";
  d.type = type;
  d.subgroup_size = subgroup;
  d.subgroup_shuffle = shuffle;
  d.subgroup_arithmetic = shuffle;
  d.shared_memory_bytes = 32768;
  d.max_workgroup_invocations = 1024;
  d.max_workgroup_size_x = 1024;
  d.subgroup_size_control = true;  // a required size, full subgroups, at the device's size only
  d.min_subgroup_size = d.max_subgroup_size = subgroup;
  d.max_workgroup_subgroups = 32;
  return d;
}

// Sets KVBENCH_KERNEL for the scope of a test.
struct ForceKernel {
  explicit ForceKernel(const char* v) { setenv("KVBENCH_KERNEL", v, 1); }
  ~ForceKernel() { unsetenv("KVBENCH_KERNEL"); }
};

std::string skip_reason(const DeviceInfo& dev, AttentionHeads h) {
  try {
    check_attention_device(dev, h);
  } catch (const SkipCase& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE(
    "choose_attention_kernel: cpu kernel on a CPU device with 8+ lanes and heads <= 256, gpu kernel "
    "elsewhere") {
  unsetenv("KVBENCH_KERNEL");
  const AttentionHeads h128{.key_dim = 128, .value_dim = 128};
  CHECK(choose_attention_kernel(device("cpu", 8), h128) == AttentionKernel::lanes);
  CHECK(choose_attention_kernel(device("cpu", 16), h128) == AttentionKernel::lanes);
  CHECK(choose_attention_kernel(device("cpu", 4), h128) ==
        AttentionKernel::tiles);  // lavapipe at LP_NATIVE_VECTOR_WIDTH=128
  CHECK(choose_attention_kernel(device("cpu", 8, false), h128) == AttentionKernel::tiles);
  CHECK(choose_attention_kernel(device("discrete-gpu", 32), h128) == AttentionKernel::tiles);
  CHECK(choose_attention_kernel(device("integrated-gpu", 8), h128) == AttentionKernel::tiles);
  CHECK(choose_attention_kernel(device("cpu", 8), {.key_dim = 576, .value_dim = 512}) ==
        AttentionKernel::tiles);
  CHECK(choose_attention_kernel(device("cpu", 8), {.key_dim = 264, .value_dim = 264}) ==
        AttentionKernel::tiles);
  CHECK(choose_attention_kernel(device("cpu", 8), {.key_dim = 24, .value_dim = 24, .lanes_fit = false}) ==
        AttentionKernel::tiles);
  {
    ForceKernel force("gpu");
    CHECK(choose_attention_kernel(device("cpu", 8), h128) == AttentionKernel::tiles);
  }
  {
    ForceKernel force("cpu");
    CHECK(choose_attention_kernel(device("discrete-gpu", 32), h128) == AttentionKernel::lanes);
    // Forced where it cannot run: a SKIP that names the subgroup size.
    CHECK(skip_reason(device("cpu", 4), h128).find("subgroups of at least 8 lanes") != std::string::npos);
    CHECK(skip_reason(device("cpu", 8), {.key_dim = 512, .value_dim = 512}).find("at most 256") !=
          std::string::npos);
  }
  {
    ForceKernel force("fast");
    CHECK_THROWS_WITH_AS(choose_attention_kernel(device("cpu", 8), h128), doctest::Contains("KVBENCH_KERNEL"),
                         std::runtime_error);
  }
}

TEST_CASE(
    "choose_attention_kernel: the decode kernel for a GPU's single-row batches it can run; forced, for "
    "any batch where it can run") {
  unsetenv("KVBENCH_KERNEL");
  const AttentionHeads h128{.key_dim = 128, .value_dim = 128};
  const bool decode = true;
  CHECK(choose_attention_kernel(device("discrete-gpu", 32), h128, decode) == AttentionKernel::decode);
  CHECK(choose_attention_kernel(device("discrete-gpu", 64), h128, decode) == AttentionKernel::decode);
  CHECK(choose_attention_kernel(device("discrete-gpu", 32), h128, !decode) == AttentionKernel::tiles);
  CHECK(choose_attention_kernel(device("cpu", 8), h128, decode) == AttentionKernel::lanes);  // lavapipe
  CHECK(choose_attention_kernel(device("cpu", 4), h128, decode) == AttentionKernel::tiles);
  // MLA's 576/512 too (its heads split over the subgroups).
  const AttentionHeads mla{.key_dim = 576, .value_dim = 512};
  CHECK(choose_attention_kernel(device("discrete-gpu", 32), mla, decode) == AttentionKernel::decode);
  // Where it cannot run, the tiles kernel: heads above 576/512, no subgroup reductions,
  // subgroups that are not a power of two from 4 to 64, too little shared memory or too
  // small workgroups for 4 subgroups.
  CHECK(choose_attention_kernel(device("discrete-gpu", 32), {.key_dim = 584, .value_dim = 512}, decode) ==
        AttentionKernel::tiles);
  CHECK(choose_attention_kernel(device("discrete-gpu", 32, false), h128, decode) == AttentionKernel::tiles);
  for (uint32_t sg : {1u, 2u, 24u, 128u})
    CHECK(choose_attention_kernel(device("discrete-gpu", sg), h128, decode) == AttentionKernel::tiles);
  DeviceInfo small = device("discrete-gpu", 64);
  small.max_workgroup_invocations = 128;
  CHECK(choose_attention_kernel(small, h128, decode) == AttentionKernel::tiles);
  small = device("discrete-gpu", 32);
  small.shared_memory_bytes = decode_shared_bytes(256, 256, 1, 32) - 16;  // not even 1 vector an item
  CHECK(choose_attention_kernel(small, {.key_dim = 256, .value_dim = 256}, decode) == AttentionKernel::tiles);
  CHECK(choose_attention_kernel(small, h128, decode) == AttentionKernel::decode);
  small.shared_memory_bytes = decode_shared_bytes(576, 512, 4, 32) - 16;  // MLA needs 4 (heads split)
  CHECK(choose_attention_kernel(small, mla, decode) == AttentionKernel::tiles);
  // A device that cannot require the decode kernel's subgroups (4 full ones of its size), or
  // promised them and did not keep the promise (Runtime's probe): the tiles kernel.
  DeviceInfo uncontrolled = device("discrete-gpu", 32);
  uncontrolled.subgroup_size_control = false;
  CHECK(choose_attention_kernel(uncontrolled, h128, decode) == AttentionKernel::tiles);
  DeviceInfo few = device("discrete-gpu", 32);
  few.max_workgroup_subgroups = 2;
  CHECK(choose_attention_kernel(few, h128, decode) == AttentionKernel::tiles);
  DeviceInfo wide = device("discrete-gpu", 32);
  wide.min_subgroup_size = 8;
  wide.max_subgroup_size = 16;  // 32 cannot be required; 16 can, and is taken (decode_subgroup_size)
  CHECK(decode_subgroup_size(wide) == 16);
  CHECK(choose_attention_kernel(wide, h128, decode) == AttentionKernel::decode);
  wide.max_workgroup_subgroups = 2;  // no size can be required 4 times a workgroup
  CHECK(choose_attention_kernel(wide, h128, decode) == AttentionKernel::tiles);
  CHECK(skip_reason(uncontrolled, h128).empty());
  {
    // Forced there: a SKIP that says why, never a run on subgroups the kernel was not built for.
    ForceKernel force("decode");
    CHECK(skip_reason(uncontrolled, h128).find("cannot require a subgroup size with full subgroups") !=
          std::string::npos);
    CHECK(skip_reason(few, h128).find("cannot require 4 subgroups of 32 lanes") != std::string::npos);
    DeviceInfo broken = uncontrolled;
    broken.subgroup_size_broken =
        "required 4 full subgroups of 32 lanes; invocation 16 ran with gl_SubgroupID 1";
    CHECK(skip_reason(broken, h128).find("does not keep its promise") != std::string::npos);
    CHECK(skip_reason(device("discrete-gpu", 32), h128).empty());
    // Heads it does not fit go to the rule, as before.
    CHECK(choose_attention_kernel(uncontrolled, {.key_dim = 584, .value_dim = 512}, decode) ==
          AttentionKernel::tiles);
  }
  {
    ForceKernel force("decode");
    CHECK(choose_attention_kernel(device("cpu", 8), h128, decode) == AttentionKernel::decode);
    CHECK(choose_attention_kernel(device("cpu", 4), h128, decode) == AttentionKernel::decode);
    CHECK(choose_attention_kernel(device("cpu", 8), h128, !decode) ==
          AttentionKernel::decode);  // prefill too
    CHECK(choose_attention_kernel(device("cpu", 8), mla, decode) == AttentionKernel::decode);
  }
  // Shared memory: max(q + 4 subgroups x 2 buffers x (NV + 1) values per lane, 4 states of NV x (DV + 2)).
  CHECK(decode_shared_bytes(128, 128, 8, 32) == 4 * std::max(8 * 128 + 4 * 2 * 10 * 32, 4 * 8 * 130));
  CHECK(decode_shared_bytes(256, 256, 8, 64) == 4 * std::max(8 * 256 + 4 * 2 * 10 * 64, 4 * 8 * 258));
  CHECK(decode_shared_bytes(256, 256, 8, 64) <= 48 * 1024);  // NVIDIA's Vulkan limit
  // Heads split (above 8 vectors or V heads above 256): 4 subgroups of NV / 4 vectors each,
  // whose states are the item's: max(q + 4 x 2 x (NV / 4 + 1) values per lane, NV x (DV + 2)).
  CHECK(!decode_splits_heads(8, 256));
  CHECK(decode_splits_heads(9, 128));
  CHECK(decode_splits_heads(4, 512));
  // The kernel gets the rule as its constant HS, beside SG, NV and its workgroup of 4 subgroups.
  std::map<std::string, uint32_t> constants;
  set_decode_constants(constants, 32, 16, 128);
  CHECK(constants ==
        std::map<std::string, uint32_t>{{"SG", 32}, {"NV", 16}, {"HS", 1}, {"local_size_x", 128}});
  set_decode_constants(constants, 64, 8, 256);
  CHECK(constants ==
        std::map<std::string, uint32_t>{{"SG", 64}, {"NV", 8}, {"HS", 0}, {"local_size_x", 256}});
  set_decode_constants(constants, 16, 4, 512);
  CHECK(constants.at("HS") == 1);
  CHECK(decode_shared_bytes(576, 512, 16, 32) == 4 * std::max(16 * 576 + 4 * 2 * 6 * 32, 16 * 514));
  CHECK(decode_shared_bytes(576, 512, 16, 32) <= 48 * 1024);  // DeepSeek-V3 at TP 8 on NVIDIA
}

TEST_CASE(
    "decode_vectors: the GQA group up to 16, in fours where the heads split, fewer until the shared memory "
    "fits") {
  DeviceInfo gpu = device("discrete-gpu", 32);
  gpu.shared_memory_bytes = 48 * 1024;
  const AttentionHeads h128{.key_dim = 128, .value_dim = 128}, mla{.key_dim = 576, .value_dim = 512};
  CHECK(decode_vectors(gpu, h128, 3) == 3);
  CHECK(decode_vectors(gpu, h128, 8) == 8);
  CHECK(decode_vectors(gpu, h128, 10) == 12);  // heads split: a multiple of 4
  CHECK(decode_vectors(gpu, h128, 16) == 16);
  CHECK(decode_vectors(gpu, h128, 64) == 16);
  CHECK(decode_vectors(gpu, mla, 16) == 16);  // 41 KiB
  CHECK(decode_vectors(gpu, mla, 2) == 4);
  gpu.shared_memory_bytes = 32 * 1024;  // lavapipe's: 16 MLA vectors (41 KiB) do not fit, 8 do
  CHECK(decode_vectors(gpu, mla, 16) == 8);
  gpu.shared_memory_bytes = decode_shared_bytes(576, 512, 4, 32) - 16;
  CHECK(decode_vectors(gpu, mla, 16) == 0);
}

TEST_CASE(
    "check_attention_device: no subgroup SKIP at any width; head sizes to 576/512 fit 32 KiB of shared "
    "memory") {
  unsetenv("KVBENCH_KERNEL");
  for (uint32_t width : {1u, 4u, 8u, 16u, 32u, 64u, 128u})
    for (int64_t d = 8; d <= 576; d += 8) {
      const int64_t dv = std::min<int64_t>(d, 512);
      CAPTURE(width);
      CAPTURE(d);
      CHECK(skip_reason(device("cpu", width), {.key_dim = d, .value_dim = dv}) == "");
      CHECK(skip_reason(device("discrete-gpu", width), {.key_dim = d, .value_dim = dv}) == "");
      CHECK(tiles_shared_bytes(d, dv) <= 32768);
    }
  CHECK(tiles_shared_bytes(128, 128) == 4 * (8 * 128 + 16 * 129 + 8 * 16 + 24 + 4 * 16));
  CHECK(tiles_shared_bytes(576, 512) == 4 * (8 * 576 + 4 * 577 + 8 * 4 + 24 + 4 * 4));
  // Limits below the plan's needs are a SKIP with the figures.
  DeviceInfo small = device("discrete-gpu", 32);
  small.shared_memory_bytes = 16384;
  CHECK(skip_reason(small, {.key_dim = 576, .value_dim = 512}).find("bytes of shared memory") !=
        std::string::npos);
  CHECK(skip_reason(small, {.key_dim = 128, .value_dim = 128}) == "");
  small.max_workgroup_invocations = 64;
  CHECK(skip_reason(small, {.key_dim = 128, .value_dim = 128}).find("workgroups of 256") !=
        std::string::npos);
  CHECK(skip_reason(device("cpu", 8), {.key_dim = 640, .value_dim = 512}).find("up to 576") !=
        std::string::npos);
  CHECK(skip_reason(device("cpu", 8), {.key_dim = 132, .value_dim = 128}).find("multiples of 8") !=
        std::string::npos);
}

namespace {

// One SDPA query vector (f32, D 8, one head) over 600 keys of ones: three decode splits of
// 256 keys. With `drop_last` the plan loses its last item, a hole in the plan.
std::vector<float> attention_with_plan(Runtime& rt, bool drop_last, uint32_t vectors_per_item) {
  const int64_t D = 8, S = 600;
  AttentionShape shape{.num_heads = 1, .num_kv_heads = 1, .q_rows = {1}, .kv_len = {S}};
  shape.out_vector = [](int64_t, int64_t, int64_t) { return int64_t{0}; };
  AttentionPlan plan = plan_attention(shape, vectors_per_item);
  REQUIRE(plan.num_items == 3);
  if (drop_last) {
    --plan.num_items;
    plan.items.resize(plan.items.size() - 5);
  }
  Batch batch(rt);
  Buffer* q = batch.buffer_with(std::vector<float>(D, 0.5f));
  Buffer* k = batch.buffer_with(std::vector<float>(S * D, 1.0f));
  Buffer* v = batch.buffer_with(std::vector<float>(S * D, 1.0f));
  Buffer* scale = batch.buffer_with(std::vector<float>{1.0f});
  Buffer* out = batch.buffer(D * 4);
  const auto f32 = static_cast<uint32_t>(DType::f32);
  KernelParams params{
      {"N", 1},         {"num_heads", 1},     {"num_kv_heads", 1},  {"S_q", 1},          {"S_kv", S},
      {"G", 1},         {"k_compressed", 0},  {"v_compressed", 0},  {"k_layout", 0},     {"k_dtype", f32},
      {"v_dtype", f32}, {"sk_dtype", f32},    {"sv_dtype", f32},    {"zk_dtype", f32},   {"zv_dtype", f32},
      {"has_zk", 0},    {"has_zv", 0},        {"q_dtype", f32},     {"scale_op", 0},     {"causal", 0},
      {"has_mask", 0},  {"mask_n_stride", 0}, {"mask_h_stride", 0}, {"mask_q_stride", 0}};
  KernelBuffers buffers{{"query", q},         {"key", k},           {"value", v},
                        {"scale", scale},     {"scale_k", nullptr}, {"zp_k", nullptr},
                        {"scale_v", nullptr}, {"zp_v", nullptr},    {"attn_mask", nullptr}};
  run_attention(batch, plan,
                {.kernel = Kernel("sdpa_attention", {{"D", static_cast<uint32_t>(D)}}),
                 .buffers = buffers,
                 .params = params,
                 .out = out,
                 .out_dtype = DType::f32,
                 .head_dim = D,
                 .empty = EmptyRow::zeros,
                 .heads = {.key_dim = D, .value_dim = D}});
  std::vector<float> result(D);
  batch.download(*out, std::span(reinterpret_cast<uint8_t*>(result.data()), result.size() * 4));
  batch.submit();
  return result;
}

}  // namespace

TEST_CASE(
    "run_attention: a split the plan leaves out makes its output NaN (partials filled with NaN first)") {
  Runtime rt;
  for (const char* kernel : {"gpu", "cpu", "decode"}) {
    CAPTURE(kernel);
    ForceKernel force(kernel);
    if (std::string(kernel) == "cpu" && rt.info().subgroup_size < 8) continue;  // the cpu kernel cannot run
    for (uint32_t per_item : {8u, 4u}) {  // the cpu kernel's items of 8 and of 4 lanes
      CAPTURE(per_item);
      for (float x : attention_with_plan(rt, false, per_item)) CHECK(x == doctest::Approx(1.0f));
      for (float x : attention_with_plan(rt, true, per_item)) CHECK(std::isnan(x));
    }
  }
}

TEST_CASE("plan_attention: items of at most vectors_per_item vectors, split-major") {
  // Decode, 2 batches, 32 q heads on 8 kv heads (G 4), 600 keys: 3 splits of 256.
  AttentionShape shape{.num_heads = 32, .num_kv_heads = 8, .q_rows = {1, 1}, .kv_len = {600, 600}};
  shape.out_vector = [](int64_t b, int64_t, int64_t h) { return b * 32 + h; };
  CHECK(max_vectors_per_kv_head(shape) == 4);
  for (uint32_t per_item : {8u, 4u, 3u}) {
    CAPTURE(per_item);
    const AttentionPlan plan = plan_attention(shape, per_item);
    CHECK(plan.vectors_per_item == per_item);
    const uint32_t items_per_group = per_item >= 4 ? 1 : 2;  // 4 vectors per (batch, kv head)
    REQUIRE(plan.num_items == 2 * 3 * 8 * items_per_group);
    for (uint32_t i = 0; i < plan.num_items; ++i) {
      const uint32_t* it = &plan.items[5 * i];  // batch, kv head, first vector, vectors, split
      CHECK(it[3] <= per_item);
      CHECK(it[2] + it[3] <= 4);
    }
    // The first items: batch 0, split 0, kv heads 0, 1, ...
    CHECK(plan.items[0] == 0);
    CHECK(plan.items[4] == 0);
    CHECK(plan.items[5 * items_per_group + 1] == 1);
    CHECK(plan.items[5 * items_per_group + 4] == 0);
  }
  CHECK_THROWS_AS(plan_attention(shape, 0), std::logic_error);
  CHECK_THROWS_AS(plan_attention(shape, kDecodeMaxVectors + 1), std::logic_error);
  shape.q_rows = {1, 2};  // a prefill row doubles the vectors of batch 1
  CHECK(max_vectors_per_kv_head(shape) == 8);
}

TEST_CASE("plan_attention: decode splits of decode_split keys (the cpu kernel's 1024), prefill in one") {
  // One decode row over 2500 keys and one of 3 rows over 2500: 3 splits of 1024 (1024,
  // 1024, 452) for the decode, one of 2512 (whole tiles) for the other; 4 q heads on 1 kv head.
  AttentionShape shape{.num_heads = 4, .num_kv_heads = 1, .q_rows = {1, 3}, .kv_len = {2500, 2500}};
  shape.out_vector = [](int64_t b, int64_t r, int64_t h) { return b * 4 + r * 4 + h; };  // 16 vectors
  const AttentionPlan plan = plan_attention(shape, 8, {.max_keys = kDecodeSplitLanes});
  CHECK(plan.batch_plan ==
        std::vector<uint32_t>{0, 3, 1024, 12, 1, 2512});  // slot base, splits, split length
  CHECK(plan.num_items == 3 + 2);  // decode: 4 vectors, one item per split; prefill: 12 vectors, two items
  CHECK(plan.slots == 12 + 12);    // a partial state per prefill vector
  CHECK(plan_attention(shape).batch_plan[2] == 256);  // the default: the gpu kernel's
  CHECK_THROWS_AS(plan_attention(shape, 8, {.max_keys = 0}), std::logic_error);
  CHECK_THROWS_AS(plan_attention(shape, 8, {.min_keys = 40}), std::logic_error);  // not whole tiles
}

TEST_CASE(
    "plan_attention: a prefill splits its keys only while the device wants items, at most one per 2048 "
    "keys") {
  // 2 rows of 4 q heads on 1 kv head over 10000 keys: one item per split.
  AttentionShape shape{.num_heads = 4, .num_kv_heads = 1, .q_rows = {2}, .kv_len = {10000}};
  shape.out_vector = [](int64_t, int64_t r, int64_t h) { return r * 4 + h; };
  CHECK(plan_attention(shape, 8, {.target_items = 1}).batch_plan == std::vector<uint32_t>{0, 1, 10000});
  // 3 items wanted: 3 splits of 3334 keys, rounded up to whole tiles.
  CHECK(plan_attention(shape, 8, {.target_items = 3}).batch_plan == std::vector<uint32_t>{0, 3, 3344});
  // 264 wanted (132 compute units): no more splits than ceil(10000 / 2048) = 5, of 2000 keys.
  const AttentionPlan most = plan_attention(shape, 8, {.target_items = 264});
  CHECK(most.batch_plan[1] == 5);
  CHECK(most.batch_plan[2] == 2000);
}

TEST_CASE(
    "plan_attention: a 32k Llama-3-8B prefill and a 16k DeepSeek-V3 MLA prefill fit every GPU's scratch") {
  // The smallest maxStorageBufferRange among desktop GPUs: 1 GiB (Intel ANV); NVIDIA and RADV
  // allow 4 GiB - 1. Splitting every 2048 keys had needed 8.7 GB and 4.3 GB. These are the
  // partial states where the merge runs (KVBENCH_DIRECT=0); by default a one-split plan's
  // kernel finishes its vectors itself and needs none (run_planned).
  const uint64_t gib = uint64_t{1} << 30;
  for (int64_t target : {0, 2 * 16, 2 * 132, 2 * 1024}) {  // compute units: none, a laptop, an H100, more
    CAPTURE(target);
    AttentionShape llama{.num_heads = 32, .num_kv_heads = 8, .q_rows = {32768}, .kv_len = {32768}};
    llama.out_vector = [](int64_t, int64_t r, int64_t h) { return r * 32 + h; };
    const AttentionPlan l = plan_attention(llama, 8, {.target_items = target});
    MESSAGE("Llama-3-8B 32k prefill, target ", target, ": ", attention_scratch_bytes(l, 128), " bytes");
    CHECK(l.slots == 32768u * 32);
    CHECK(attention_scratch_bytes(l, 128) == uint64_t{32768} * 32 * 130 * 4);  // 545 MB
    CHECK(attention_scratch_bytes(l, 128) < gib);
    // DeepSeek-V3 at TP8: 16 q heads on one latent kv head, Dk 576, Dv 512.
    AttentionShape mla{.num_heads = 16, .num_kv_heads = 1, .q_rows = {16384}, .kv_len = {16384}};
    mla.out_vector = [](int64_t, int64_t r, int64_t h) { return r * 16 + h; };
    const AttentionPlan m = plan_attention(mla, 8, {.target_items = target});
    MESSAGE("DeepSeek-V3 MLA 16k prefill, target ", target, ": ", attention_scratch_bytes(m, 512), " bytes");
    CHECK(attention_scratch_bytes(m, 512) == uint64_t{16384} * 16 * 514 * 4);  // 539 MB
    CHECK(attention_scratch_bytes(m, 512) < gib);
  }
}

TEST_CASE(
    "plan_attention: decode splits shorten until the plan fills the device twice, within the merge's "
    "splits") {
  // Llama-3-70B TP8 decode: 8 q heads on 1 kv head, 32k keys. 256-key splits give 128 items;
  // a device of 132 compute units wants 264: splits of 112 keys, 293 items.
  AttentionShape shape{.num_heads = 8, .num_kv_heads = 1, .q_rows = {1}, .kv_len = {32768}};
  shape.out_vector = [](int64_t, int64_t, int64_t h) { return h; };
  CHECK(plan_attention(shape).num_items == 128);
  const AttentionPlan filled = plan_attention(shape, 8, {.target_items = 264});
  CHECK(filled.num_items >= 264);
  CHECK(filled.batch_plan[2] == 112);
  CHECK(filled.batch_plan[2] % 16 == 0);
  // Enough items already: the splits stay at max_keys.
  CHECK(plan_attention(shape, 8, {.target_items = 100}).batch_plan[2] == 256);
  // A short sequence stops at min_keys: 1000 keys, 16 splits of 64.
  shape.kv_len = {1000};
  CHECK(plan_attention(shape, 8, {.target_items = 264}).batch_plan[1] == 16);
  CHECK(plan_attention(shape, 8, {.target_items = 264}).batch_plan[2] == 64);
  // A million keys: 4096 splits of 256 would exceed the merge's 512; splits of 2048.
  shape.kv_len = {1 << 20};
  const AttentionPlan longest = plan_attention(shape);
  CHECK(longest.batch_plan[1] == 512);
  CHECK(longest.batch_plan[2] == 2048);
}

TEST_CASE(
    "attention_vectors_per_item: 4 for the cpu kernel's decodes with G <= 4 at heads <= 128 over at least "
    "32768 K rows, G for the decode kernel, else 8") {
  unsetenv("KVBENCH_KERNEL");
  unsetenv("KVBENCH_FOUR_LANES");
  AttentionShape decode{.num_heads = 32, .num_kv_heads = 8, .q_rows = {1, 1}, .kv_len = {4096, 4096}};
  const AttentionHeads h128{.key_dim = 128, .value_dim = 128};
  CHECK(attention_vectors_per_item(device("cpu", 8), h128, decode) == 4);
  // K rows = keys x kv heads over the batches: (2048 + 2048) x 8 = 32768 is enough, one key
  // less is a short decode, whose items keep 8 lanes (its pipeline is shared, not compiled anew).
  AttentionShape edge = decode;
  edge.kv_len = {2048, 2048};
  CHECK(attention_vectors_per_item(device("cpu", 8), h128, edge) == 4);
  edge.kv_len = {2048, 2047};
  CHECK(attention_vectors_per_item(device("cpu", 8), h128, edge) == 8);
  setenv("KVBENCH_FOUR_LANES", "all", 1);  // every decode that fits (the full tier's checks)
  CHECK(attention_vectors_per_item(device("cpu", 8), h128, edge) == 4);
  setenv("KVBENCH_FOUR_LANES", "some", 1);
  CHECK_THROWS_WITH_AS(attention_vectors_per_item(device("cpu", 8), h128, edge),
                       "KVBENCH_FOUR_LANES must be all or empty, not 'some'", std::runtime_error);
  AttentionShape long_prefill = decode;  // 8 vectors: never items of 4, yet the bad value is named
  long_prefill.q_rows = {4, 4};
  CHECK_THROWS_WITH_AS(attention_vectors_per_item(device("discrete-gpu", 32), h128, long_prefill),
                       "KVBENCH_FOUR_LANES must be all or empty, not 'some'", std::runtime_error);
  unsetenv("KVBENCH_FOUR_LANES");
  CHECK(attention_vectors_per_item(device("cpu", 16), {.key_dim = 64, .value_dim = 64}, decode) == 4);
  CHECK(attention_vectors_per_item(device("cpu", 8), {.key_dim = 192, .value_dim = 128}, decode) ==
        8);                                                                          // D / 4 > 32
  CHECK(attention_vectors_per_item(device("cpu", 4), h128, decode) == 8);            // the gpu kernel runs it
  CHECK(attention_vectors_per_item(device("discrete-gpu", 32), h128, decode) == 4);  // the decode kernel: G
  CHECK(attention_vectors_per_item(device("discrete-gpu", 32, false), h128, decode) == 8);  // tiles
  AttentionShape gqa8 = decode;
  gqa8.num_kv_heads = 4;  // G 8: an item of 8 is full
  CHECK(attention_vectors_per_item(device("cpu", 8), h128, gqa8) == 8);
  AttentionShape prefill = decode;
  prefill.q_rows = {1, 16};
  CHECK(attention_vectors_per_item(device("cpu", 8), h128, prefill) == 8);
  ForceKernel force("gpu");
  CHECK(attention_vectors_per_item(device("cpu", 8), h128, decode) == 8);
}

TEST_CASE(
    "attention_module: the decode kernel's f16 module only where the operator has one and the device rounds "
    "f16 to nearest even") {
  unsetenv("KVBENCH_F16_DEQUANT");
  DeviceInfo f16 = device("discrete-gpu", 32), no_f16 = f16;
  f16.f16_rte = true;
  using K = AttentionKernel;
  CHECK(attention_module("mhca_attention", K::lanes, true, f16) == "mhca_attention");
  CHECK(attention_module("mhca_attention", K::tiles, true, f16) == "mhca_attention_tiles");
  CHECK(attention_module("mhca_attention", K::decode, true, f16) == "mhca_attention_decode_f16");
  CHECK(attention_module("mhca_attention", K::decode, true, no_f16) == "mhca_attention_decode");
  CHECK(attention_module("fia_attention", K::decode, false, f16) == "fia_attention_decode");
  setenv("KVBENCH_F16_DEQUANT", "0", 1);
  CHECK(attention_module("mhca_attention", K::decode, true, f16) == "mhca_attention_decode");
  setenv("KVBENCH_F16_DEQUANT", "1", 1);
  CHECK(attention_module("mhca_attention", K::decode, true, f16) == "mhca_attention_decode_f16");
  setenv("KVBENCH_F16_DEQUANT", "yes", 1);  // refused on every kernel, lavapipe's included
  CHECK_THROWS_WITH_AS(attention_module("mhca_attention", K::lanes, true, no_f16),
                       doctest::Contains("KVBENCH_F16_DEQUANT"), std::runtime_error);
  unsetenv("KVBENCH_F16_DEQUANT");
}

TEST_CASE("decode_subgroup_size: the register budget picks 16 on Intel's 8-32, the default elsewhere") {
  // Hand-derived: at 8 vectors of V rows of 128 a lane keeps 8 x (8 CPL + 2) + 16 = 96 floats
  // for SG >= 16 (CPL 1), 8 x (16 + 2) + 16 = 160 at SG 8 (CPL 2).
  CHECK(decode_live_floats(32) == 96);
  CHECK(decode_live_floats(16) == 96);
  CHECK(decode_live_floats(8) == 160);
  DeviceInfo intel = device("gpu", 32);
  intel.vendor_id = 0x8086;
  intel.min_subgroup_size = 8;
  CHECK(lane_register_budget(intel, 32) == 64);   // 96 spill at SIMD32
  CHECK(lane_register_budget(intel, 16) == 128);  // fit at SIMD16
  CHECK(decode_subgroup_size(intel) == 16);
  intel.max_workgroup_subgroups = 2;  // 4 subgroups of any size cannot be required: the default
  CHECK(decode_subgroup_size(intel) == 32);
  DeviceInfo radv = device("gpu", 64);
  radv.vendor_id = 0x1002;
  radv.min_subgroup_size = 32;
  CHECK(decode_subgroup_size(radv) == 64);
  DeviceInfo nvidia = device("gpu", 32);
  nvidia.vendor_id = 0x10de;
  CHECK(decode_subgroup_size(nvidia) == 32);
  CHECK(decode_subgroup_size(device("cpu", 8)) == 8);  // lavapipe
  // Nothing fits (a hypothetical Intel part of 32-64 lanes): the smallest, most registers a lane.
  DeviceInfo wide = intel;
  wide.max_workgroup_subgroups = 32;
  wide.subgroup_size = wide.max_subgroup_size = 64;
  wide.min_subgroup_size = 32;
  CHECK(decode_subgroup_size(wide) == 32);
  // And the kernel's workgroup follows: 4 subgroups of 16 lanes on Intel.
  intel.max_workgroup_subgroups = 32;
  std::map<std::string, uint32_t> constants;
  set_decode_constants(constants, decode_subgroup_size(intel), 8, 128);
  CHECK(constants["SG"] == 16);
  CHECK(constants["local_size_x"] == 64);
}

TEST_CASE("plan_waves: whole rows per wave within the slots, every item and vector in exactly one wave") {
  // A decode (one row, 3 splits of 1024) and two prefills of 5 and 7 rows; 6 q heads on 2 kv
  // heads (G 3), items of 4 vectors, so that an item can hold parts of two rows.
  AttentionShape shape{.num_heads = 6, .num_kv_heads = 2, .q_rows = {1, 5, 7}, .kv_len = {2500, 40, 3000}};
  shape.out_vector = [](int64_t b, int64_t r, int64_t h) {
    return (b == 0 ? 0 : b == 1 ? 1 : 6) * 6 + r * 6 + h;
  };
  const AttentionPlan plan = plan_attention(shape, 4, {.max_keys = kDecodeSplitLanes});
  REQUIRE(plan.slots == 18 + 30 + 42);
  CHECK(plan_waves(plan, shape, plan.slots).size() == 1);  // it fits: the plan itself
  const int64_t G = 3, H = 6;
  for (uint64_t most : {24u, 30u, 42u, 60u}) {  // 24: the largest unit, rows 0-3 of a prefill
    CAPTURE(most);
    const auto waves = plan_waves(plan, shape, most);
    REQUIRE(waves.size() > 1);
    std::map<uint64_t, int> slot_writes;  // global slot -> times written, over the waves
    uint32_t items = 0;
    std::vector<int> vector_waves(plan.merge.size() / 4, 0);
    uint64_t base = 0;  // the wave's first global slot
    for (const auto& w : waves) {
      CHECK(w.slots <= most);
      items += w.num_items;
      for (uint32_t i = 0; i < w.num_items; ++i) {
        const uint32_t* it = &w.items[5 * size_t{i}];
        const uint32_t b = it[0], nsplit = w.batch_plan[3 * b + 1];
        for (uint32_t v = it[2]; v < it[2] + it[3]; ++v) {
          // shaders/attention_core.glsl partial_first, in 32-bit arithmetic as the shaders do it
          const uint32_t slot =
              w.batch_plan[3 * b] + static_cast<uint32_t>(((v / G) * H + it[1] * G + v % G) * nsplit + it[4]);
          CHECK(slot < w.slots);
          ++slot_writes[base + slot];
        }
      }
      for (size_t v = 0; v < vector_waves.size(); ++v)
        if (w.merge[4 * v] != kOtherWave) {
          ++vector_waves[v];
          CHECK(w.merge[4 * v] + w.merge[4 * v + 1] <= w.slots);
          CHECK(base + w.merge[4 * v] == plan.merge[4 * v]);
        }
      base += w.slots;
    }
    CHECK(base == plan.slots);
    CHECK(items == plan.num_items);
    CHECK(slot_writes.size() == plan.slots);
    CHECK(std::all_of(slot_writes.begin(), slot_writes.end(), [](const auto& e) { return e.second == 1; }));
    CHECK(std::all_of(vector_waves.begin(), vector_waves.end(), [](int n) { return n == 1; }));
  }
  // Rows that no item boundary lets apart: 4-vector items over rows of 3 vectors tie rows
  // 0-3 of a prefill (vectors 0-11, 3 items), 24 slots; 23 cannot hold them.
  CHECK(plan_waves(plan, shape, 23).empty());
}

TEST_CASE(
    "plan_attention: cap_keys bounds every split, prefill and decode, unless the merge's 512 splits cannot") {
  AttentionShape shape{.num_heads = 4, .num_kv_heads = 1, .q_rows = {1, 3}, .kv_len = {2500, 1000}};
  shape.out_vector = [](int64_t b, int64_t r, int64_t h) { return b * 4 + r * 4 + h; };
  // The decode's 1024-key splits and the prefill's one split, both cut to 320 keys.
  const AttentionPlan capped = plan_attention(shape, 8, {.max_keys = kDecodeSplitLanes, .cap_keys = 320});
  CHECK(capped.batch_plan == std::vector<uint32_t>{0, 8, 320, 32, 4, 320});  // ceil(2500/320), ceil(1000/320)
  CHECK(plan_attention(shape, 8, {.max_keys = kDecodeSplitLanes, .cap_keys = 330}).batch_plan[2] == 320);
  // A million keys in at most 512 splits need 2048 keys a split: the cap yields, the caller refuses.
  shape.kv_len = {1 << 20, 1000};
  CHECK(plan_attention(shape, 8, {.cap_keys = 320}).batch_plan[2] == 2048);
}
