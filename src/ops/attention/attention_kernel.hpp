#pragma once
// Runs the shared attention kernel (an operator's shader built on attention_core.glsl)
// and the shared merge for one planned case.
#include <functional>
#include <map>
#include <string>

#include "core/dtype.hpp"
#include "ops/attention/attention_plan.hpp"
#include "ref/attention.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

// The three bodies of shaders/attention_core.glsl (specs/attention-kernels.md).
enum class AttentionKernel {
  lanes,   // "cpu": 8 (or 4) subgroup lanes per item, shuffles; subgroups >= 8, heads <= 256
  tiles,   // "gpu": one workgroup per item, K/V tiles in shared memory, any subgroup size
  decode,  // "decode": one workgroup of 4 subgroups per item, no barrier in the key loop;
           // a GPU's single-row batches (forced: any), heads <= 576/512, subgroup reductions
};

// What decides the kernel of a case: its head sizes (of Q/K, of V) and whether the
// operator's loads fit the lanes kernel's slices of D / 8 elements.
struct AttentionHeads {
  int64_t key_dim = 0, value_dim = 0;
  bool lanes_fit = true;
};

constexpr uint32_t kTilesWorkgroup = 128;        // WG in shaders/attention_tiles.glsl
constexpr uint32_t kLanesWorkgroup = 64;         // local_size_x of shaders/attention_lanes.glsl
constexpr uint32_t kMergeSplitsWorkgroup = 256;  // MERGE_WORKGROUP in shaders/attention_merge_splits.comp
// shaders/attention_decode.glsl: subgroups per workgroup (NSG).
constexpr uint32_t kDecodeSubgroups = 4;
constexpr uint32_t kPartialsPoison =
    0x7fc00000u;  // a quiet NaN: the partial states before the attention dispatch

// The kernel that runs a case on `dev`; `single_row`: every batch has one query row (a
// decode). KVBENCH_KERNEL=gpu|cpu forces one; =decode forces the decode kernel wherever the
// heads fit it (decode_fits; any batch; on a device that refuses it check_attention_device
// SKIPs the case with the reason) and leaves the rule to the rest. The rule: the lanes
// kernel on a CPU device (lavapipe, where it is faster) whose subgroups have at least 8
// lanes with shuffles, when the heads fit it; on other devices the decode kernel for
// decodes it can run; the tiles kernel everywhere else.
AttentionKernel choose_attention_kernel(const DeviceInfo& dev, const AttentionHeads& heads,
                                        bool single_row = false);

// The kernel run_attention(batch, shape, launch) runs for `shape`: choose_attention_kernel
// with single_row from the shape (an operator that specializes its loads by the kernel asks
// this, the one rule).
AttentionKernel attention_kernel_for(const DeviceInfo& dev, const AttentionHeads& heads,
                                     const AttentionShape& shape);
// The elements of a row of `dim` that one load_key / load_value call of `kernel` reads (the
// hooks' DPL, DPLV): a lane's share, dim / 8, in the lanes kernel (items of 4 lanes take
// twice that, a multiple of it); a chunk of 8 in the tiles and decode kernels.
int64_t attention_slice_elements(AttentionKernel kernel, int64_t dim);

// The shared memory the tiles kernel declares for these head sizes (bytes).
uint32_t tiles_shared_bytes(int64_t key_dim, int64_t value_dim);
// Whether the decode kernel splits an item's vectors over its subgroups (its constant HS,
// shaders/attention_decode.glsl): more than 8 vectors, or V heads above 256 (MLA's 512).
bool decode_splits_heads(uint32_t vectors, int64_t value_dim);
// The decode kernel's specialization constants for items of `vectors` query vectors at V
// head size `value_dim` on subgroups of `subgroup` lanes: SG, NV, HS and the workgroup size.
void set_decode_constants(std::map<std::string, uint32_t>& constants, uint32_t subgroup, uint32_t vectors,
                          int64_t value_dim);
// The shared memory the decode kernel declares for these head sizes, query vectors per item
// and subgroup size (bytes).
uint32_t decode_shared_bytes(int64_t key_dim, int64_t value_dim, uint32_t vectors, uint32_t subgroup);
// The decode kernel's query vectors per item for a shape whose kv heads have at most `most`
// vectors each (the GQA group of a decode): `most`, at most kDecodeMaxVectors, rounded up to
// a multiple of 4 where the heads split, and fewer (16 -> 8 -> 4 ...) until its shared memory
// fits the device; 0 when none does.
uint32_t decode_vectors(const DeviceInfo& dev, const AttentionHeads& heads, int64_t most);
// The f32 registers per lane the decode kernel keeps live at subgroups of `subgroup` lanes,
// estimated from its arrays at the load its subgroup size is chosen for (8 vectors of V
// rows of 128): per vector, CPL 8-float P.V accumulators, a score and a running sum, and the
// two 8-element K chunks in flight.
uint32_t decode_live_floats(uint32_t subgroup);
// The f32 registers per lane `dev` gives subgroups of `subgroup` lanes without spilling: on
// Intel (vendor 0x8086) a hardware thread's register file (256 GRFs of 32 bytes in large-GRF
// mode) is shared by its SIMD lanes, 2048 / subgroup; elsewhere a lane's registers do not
// shrink with the width (NVIDIA 255 per thread, AMD 256 VGPRs per lane), 255.
uint32_t lane_register_budget(const DeviceInfo& dev, uint32_t subgroup);
// The subgroup size the decode kernel is built for and requires on `dev`: the device's
// default where its live registers fit the budget, else the largest size in
// [min_subgroup_size, max_subgroup_size] (4 to 64, powers of two, 4 subgroups a workgroup)
// that fits, else the smallest (most registers per lane). 16 on Intel's 8-32; the default
// elsewhere (32 NVIDIA, 64 RADV, lavapipe's).
uint32_t decode_subgroup_size(const DeviceInfo& dev);
// Why the decode kernel cannot run on `dev` at all, or "" when it can: it needs subgroup
// reductions and 4 full subgroups per workgroup of a size it requires, the device's
// (4 to 64 lanes, a power of two; VK_EXT_subgroup_size_control's required size with full
// subgroups): a device whose driver chooses the size could run other subgroups than the
// kernel was built for (lavapipe at 1024 bits ran 8 of 16 lanes for 4 of 32).
std::string decode_device_refusal(const DeviceInfo& dev);
// Whether these heads fit the decode kernel on `dev`: head sizes multiples of 8 of at most
// 576 (Q/K) and 512 (V), its shared memory at some items (decode_vectors).
bool decode_fits(const DeviceInfo& dev, const AttentionHeads& heads);
// Both: the decode kernel can run these heads on `dev`.
bool decode_can_run(const DeviceInfo& dev, const AttentionHeads& heads);

// Throws SkipCase unless `dev` can run the chosen kernel with these heads: head sizes
// multiples of 8, at most 576 (Q/K) and 512 (V) for tiles, 256 for lanes (above 32
// elements per lane llvmpipe no longer unrolls its loops: wrong results, measured at 512);
// the tiles kernel's shared memory and workgroup size within the device's limits.
void check_attention_device(const DeviceInfo& dev, const AttentionHeads& heads);

struct AttentionLaunch {
  Kernel kernel;  // the operator's attention shader (lanes name), D (of Q and K) as specialization constant 0
  KernelBuffers buffers;    // the operator's bindings; the plan's are added
  KernelParams params;      // the operator's parameters; num_items is added
  Buffer* out = nullptr;    // the output tensor: [vectors in the plan's order, head_dim]
  Buffer* lse = nullptr;    // the log-sum-exp of each vector at the plan's lse index (optional)
  Buffer* sinks = nullptr;  // one sink logit per head, f32 (optional; ggml's attention sinks)
  // An i8 output is post-quantized with these (shaders/attention_merge_common.glsl).
  struct PostQuant {
    Buffer* scale = nullptr;
    Buffer* offset = nullptr;  // optional
    bool per_channel = false;
    DType dtype = DType::f32;
  } post_quant;
  DType out_dtype = DType::f16;
  int64_t head_dim = 0;  // of V and the output
  EmptyRow empty = EmptyRow::zeros;
  AttentionHeads heads;  // chooses the kernel, as check_attention_device did
  // The shader has a `<name>_decode_f16` module, the decode kernel with f16 dequantization
  // (MHCA's f16 scales: shaders/quant_f16.glsl), run instead of `<name>_decode` on devices
  // with DeviceInfo::f16_rte unless KVBENCH_F16_DEQUANT=0.
  bool decode_f16 = false;
  // Called with the lanes kernel's constants and its LANES before it is created: the
  // operator may set there to one value the size constants that kernel reads at run time
  // instead (MHCA's quant group past a lane's dims), so that shapes that
  // differ only there share a pipeline on lavapipe, which compiles each at its first use.
  std::function<void(std::map<std::string, uint32_t>& constants, uint32_t lanes)> lanes_constants;
};

// Query vectors per item for this shape on `dev`: 4 when the lanes kernel runs it, every
// (batch, kv head) has at most 4 query vectors (a decode with G <= 4), the heads are at
// most 128 (a lane's share of a row, D / 4, stays within lavapipe's unrolling) and the
// shape reads at least kFourLanesMinKeyRows K rows (or KVBENCH_FOUR_LANES=all); the GQA
// group (up to kVectorsPerItem) when the decode kernel runs it, so that no lane computes
// an empty vector's dots; otherwise kVectorsPerItem. Items of 4 let one subgroup of 8 lanes serve two items
// at once instead of one item with half of its lanes idle.
uint32_t attention_vectors_per_item(const DeviceInfo& dev, const AttentionHeads& heads,
                                    const AttentionShape& shape);

// The module `kernel` runs for an operator whose lanes (cpu kernel) module is `lanes_module`:
// it, `<it>_tiles`, or `<it>_decode` (`<it>_decode_f16` where the operator has one, the
// device has f16_rte and KVBENCH_F16_DEQUANT is not 0; any other value than 0 or 1 throws).
std::string attention_module(const std::string& lanes_module, AttentionKernel kernel, bool has_decode_f16,
                             const DeviceInfo& dev);

// Plans `shape` (with attention_vectors_per_item) and records both dispatches (attention,
// then merge) and the plan's uploads in `batch`.
void run_attention(Batch& batch, const AttentionShape& shape, AttentionLaunch launch);
// The same with a given plan (tests alter plans).
void run_attention(Batch& batch, const AttentionPlan& plan, AttentionLaunch launch);

}  // namespace kvbench
