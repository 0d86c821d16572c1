#pragma once
// What kvbench knows of a Vulkan device: the features, limits and properties its kernels and
// reports use (`kvbench devices` prints them), read once per physical device, and the
// default device. specs/runtime.md has the design.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kvbench {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string type;  // discrete-gpu, integrated-gpu, virtual-gpu, cpu, other
  std::string driver;
  std::string api_version;
  bool is_gpu = false;
  // RADV's compile-only device (RADV_FORCE_FAMILY=...: "Null hardware (RADV ...)"): it
  // compiles pipelines but runs nothing; never a default, refused by Runtime.
  bool null_device = false;
  bool shader_int8 = false, shader_float16 = false, shader_int64 = false, shader_float64 = false;
  bool storage_8bit = false, storage_16bit = false;
  // f16 arithmetic that rounds to nearest even where a shader asks (shaderFloat16 and
  // VK_KHR_shader_float_controls' shaderRoundingModeRTEFloat16; both enabled by Runtime):
  // the decode kernel's f16 dequantization (shaders/quant_f16.glsl) needs it.
  bool f16_rte = false;
  // VK_KHR_shader_float_controls' shaderSignedZeroInfNanPreserveFloat32 (the extension
  // enabled by Runtime): every kvbench shader declares SignedZeroInfNanPreserve for f32
  // (shaders/float_controls.glsl), so that the -inf markers, NaN fills and non-finite data
  // keep their IEEE meaning (specs/runtime.md "Inf and NaN"). A device without it cannot
  // run them: every case SKIPs with the reason.
  bool inf_nan_preserve_f32 = false;
  // shaderRoundingModeRTEFloat32: every kvbench shader declares RoundingModeRTE for f32
  // (shaders/float_controls.glsl), since its exact paths (quantizer codes, FP8 encoding, f16
  // roundings, Dekker products) need round-to-nearest-even. Without it every case SKIPs.
  bool rte_f32 = false;
  uint32_t subgroup_size = 0;
  uint32_t vendor_id = 0;  // VkPhysicalDeviceProperties::vendorID (0x8086 Intel, 0x10de NVIDIA, 0x1002 AMD)
  // The most loop iterations one shader invocation runs, all its loops together, or 0 for no
  // such limit. llvmpipe (lavapipe) counts every loop iteration of an invocation against one
  // budget of 65535 (Mesa's LP_MAX_TGSI_LOOP_ITERATIONS, "shared between every loop in a
  // shader") and then ends the loops silently: a kernel that needs more computes a wrong
  // result with no error. The attention planner keeps each split within it.
  uint32_t loop_iteration_limit = 0;
  bool subgroup_shuffle = false;     // compute-stage subgroup shuffles
  bool subgroup_arithmetic = false;  // compute-stage subgroup reductions (subgroupMax, subgroupAdd)
  // VK_EXT_subgroup_size_control (core in Vulkan 1.3) with subgroupSizeControl and
  // computeFullSubgroups, for the compute stage, enabled by Runtime: a pipeline may then
  // require a subgroup size in [min_subgroup_size, max_subgroup_size] with full subgroups
  // (Kernel::subgroup_size), at most max_workgroup_subgroups of them per workgroup. Without
  // it the driver chooses the size per pipeline, and may run partial subgroups.
  bool subgroup_size_control = false;
  uint32_t min_subgroup_size = 0, max_subgroup_size = 0, max_workgroup_subgroups = 0;
  // What a Runtime's probe saw when the device promised required subgroups and did not keep
  // the promise (subgroup_size_control is then false); empty otherwise.
  std::string subgroup_size_broken;
  // Whether a compute pipeline can be promised subgroups of `size` lanes, all full, `count`
  // of them per workgroup of size * count invocations.
  bool can_require_subgroups(uint32_t size, uint32_t count) const {
    return subgroup_size_control && size >= min_subgroup_size && size <= max_subgroup_size &&
           count <= max_workgroup_subgroups;
  }
  uint32_t shared_memory_bytes = 0;
  uint64_t max_storage_buffer_range = 0;
  std::array<uint32_t, 3> max_workgroup_count{};  // maxComputeWorkGroupCount
  uint32_t max_workgroup_invocations = 0,
           max_workgroup_size_x = 0;  // maxComputeWorkGroupInvocations, Size[0]
  uint32_t max_stage_storage_buffers =
      0;  // min(maxPerStageDescriptorStorageBuffers, maxDescriptorSetStorageBuffers)
  uint32_t max_stage_sampled_images = 0;  // the same for sampled images, which texel buffers count as
  // maxTexelBufferElements, or 0 when R32G32B32A32_UINT cannot be a uniform texel buffer
  // (Vulkan requires it can): the most uvec4 texels a shader's `_texels` binding views.
  uint64_t max_texel_buffer_elements = 0;
  bool timestamps = false;
  // VK_KHR_shader_clock's shaderSubgroupClock (enabled when present): `kvbench bench`
  // measures the clock its kernels ran at with it. VK_EXT_calibrated_timestamps: reported.
  bool shader_clock = false, calibrated_timestamps = false;
  // Compute units (SMs, CUs, shader cores) where an extension gives them
  // (VK_AMD_shader_core_properties(2), VK_ARM_shader_core_builtins, VK_NV_shader_sm_builtins);
  // else 132 on a GPU (an H100 SXM's SMs: a smaller GPU gets more than two items a unit,
  // which costs little) and the host's threads on a CPU device (lavapipe's default).
  uint32_t compute_units = 0;
  std::string compute_units_source;  // the extension, or "default"
  // A memory type is device-local, host-visible and coherent at once (lavapipe, integrated
  // GPUs, resizable BAR): with a non-discrete device, the runtime's zero-copy mode.
  bool host_shared_memory = false;
  // The memory mode a Runtime takes by default (KVBENCH_STAGING aside): "staging" on a
  // discrete GPU or without shared memory, else "zero-copy".
  std::string default_memory_mode() const {
    return type == "discrete-gpu" || !host_shared_memory ? "staging" : "zero-copy";
  }
};

// Throws SkipCase when shader `name` binds more storage (or texel) buffers than `dev` allows one stage
// (a case's dispatch checks this before its pipeline is made).
struct ShaderInterface;
void check_descriptor_limits(const std::string& name, const ShaderInterface& shader, const DeviceInfo& dev);

// Every Vulkan physical device, in the loader's order.
std::vector<DeviceInfo> list_devices();
// The first GPU; otherwise the first device (lavapipe on a machine without a GPU); never a
// null device (-1 when there is no other).
int default_device_index(const std::vector<DeviceInfo>& devices);

}  // namespace kvbench
