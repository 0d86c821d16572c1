#pragma once
// What a dispatch names: the kernel (a shader and its specialization constants), its buffers
// and parameters by the names the shader's SPIR-V gives them, and its grid of workgroups.
// The runtime checks each against the SPIR-V (specs/runtime.md).
#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>

namespace kvbench {

class Buffer;

// A shader and the values of its specialization constants by the names the shader gives
// them (`layout(constant_id = 2) const uint KV_PATH`: the runtime reads the constant_id from
// the SPIR-V, as it binds buffers and Params members by name). Every constant the module
// declares must be given (glslang leaves out those the code never reads), and no other.
// Each distinct pair is one pipeline, built once per run (from the on-disk pipeline cache
// where the driver stores one): keep the variants few.
struct Kernel {
  std::string shader;
  std::map<std::string, uint32_t> constants;  // NAME -> value (bools 0 or 1)
  // 0: the driver chooses the subgroup size. Else the pipeline requires subgroups of this
  // many lanes, all full (VK_EXT_subgroup_size_control; only where
  // DeviceInfo::can_require_subgroups allows it). Part of the pipeline's key (":sg=N").
  uint32_t subgroup_size = 0;
  Kernel(const char* name) : shader(name) {}
  Kernel(std::string name, std::map<std::string, uint32_t> values = {})
      : shader(std::move(name)), constants(std::move(values)) {}
};

// The buffers of one dispatch by name: the name of each binding's block's first member
// (`buffer Query { uint query[]; }` binds "query"). nullptr marks an absent optional
// tensor: the binding gets a placeholder. Names a shader does not use are ignored.
using KernelBuffers = std::map<std::string, Buffer*>;

// One kernel parameter: an integer or a float, converted to the type the shader's Params
// member has (an integer out of that type's range is an error).
struct ParamValue {
  double value;
  template <typename T>
  ParamValue(T v) : value(static_cast<double>(v)) {}
};
// The kernel parameters by the names of the shader's `uniform Params` block members:
// every member must be given, and nothing else (checked at dispatch, from the SPIR-V).
using KernelParams = std::map<std::string, ParamValue>;

// `groups` workgroups as a 2-D grid within a device's maxComputeWorkGroupCount `most`: rows of
// at most most[0] groups (Vulkan guarantees 65535), as many rows as needed. Shaders linearize
// (shaders/grid.glsl) and ignore the surplus of the last row. A count beyond most[0] x most[1]
// (2^32 groups on any device) has no grid: that is std::logic_error, never a wrapped index.
std::pair<uint32_t, uint32_t> grid_layout(uint64_t groups, const std::array<uint32_t, 3>& most);

// The SPIR-V of every shader, compiled at build time (generated file).
const std::map<std::string, std::span<const uint32_t>>& embedded_shaders();

}  // namespace kvbench
