#pragma once
// What a compute shader's SPIR-V says about its interface, read from the module itself so
// that C++ never mirrors a GLSL declaration: each buffer binding with the name of its
// block's first member (`buffer Query { uint query[]; }` is "query"), and the members of
// the uniform block named `Params` (the kernel parameters) with their offsets and types.
// A trailing underscore is dropped from every name, for the names GLSL reserves
// (`uint output_[]` binds the tensor "output"). A `uniform usamplerBuffer NAME_texels`
// binds tensor NAME again, read as 16-byte texels (a uniform texel buffer of
// R32G32B32A32_UINT): where loads are per-lane loops (lavapipe's storage buffers), texel
// fetches are gathers. And each specialization constant by its name: `layout(constant_id = 2)
// const uint KV_PATH` is "KV_PATH" -> 2 (glslang leaves out a constant the code never reads),
// and `layout(local_size_x_id = 18) in` is "local_size_x" -> 18.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kvbench {

struct ShaderInterface {
  enum class Scalar { u32, i32, f32 };
  struct Field {
    std::string name;
    uint32_t offset = 0;
    Scalar type = Scalar::u32;
  };
  // Storage-buffer bindings (set 0): binding -> the names that alias it.
  std::map<uint32_t, std::vector<std::string>> buffers;
  // Uniform texel buffer bindings (set 0): binding -> the tensor it views as uvec4 texels.
  std::map<uint32_t, std::string> texel_buffers;
  // The Params uniform block, if any: its binding and 32-bit scalar members.
  std::optional<uint32_t> params_binding;
  std::vector<Field> params;
  uint32_t params_bytes = 0;
  // Specialization constants: name -> constant_id.
  std::map<std::string, uint32_t> spec_constants;
};

// Throws std::runtime_error for a module it cannot read, a Params member that is not a
// 32-bit scalar, or a specialization constant without a name.
ShaderInterface reflect_shader(std::span<const uint32_t> spirv);

}  // namespace kvbench
