#include "vk/spirv_reflect.hpp"

#include <stdexcept>

namespace kvbench {
namespace {

// SPIR-V opcodes, decorations and storage classes used here (SPIR-V 1.3 specification).
enum : uint32_t {
  OpName = 5,
  OpMemberName = 6,
  OpTypeInt = 21,
  OpTypeFloat = 22,
  OpTypeImage = 25,
  OpTypeSampledImage = 27,
  OpTypeStruct = 30,
  OpTypePointer = 32,
  OpSpecConstantComposite = 51,
  OpVariable = 59,
  OpDecorate = 71,
  OpMemberDecorate = 72,
  DecSpecId = 1,
  DecBlock = 2,
  DecBufferBlock = 3,
  DecBinding = 33,
  DecDescriptorSet = 34,
  DecOffset = 35,
  DecBuiltIn = 11,
  BuiltInWorkgroupSize = 25,
  ClassUniformConstant = 0,
  ClassUniform = 2,
  ClassStorageBuffer = 12,
  DimBuffer = 5,
};

std::string literal_string(std::span<const uint32_t> words) {
  std::string s;
  for (uint32_t w : words)
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((w >> (8 * b)) & 0xff);
      if (c == 0) return s;
      s += c;
    }
  return s;
}

// GLSL reserves some names a tensor has (`output`): the shader writes them with a
// trailing underscore, which is not part of the name.
std::string unreserved(std::string name) {
  if (name.size() > 1 && name.back() == '_') name.pop_back();
  return name;
}

}  // namespace

ShaderInterface reflect_shader(std::span<const uint32_t> code) {
  if (code.size() < 5 || code[0] != 0x07230203u) throw std::runtime_error("not a SPIR-V module");
  std::map<uint32_t, std::string> names;
  std::map<std::pair<uint32_t, uint32_t>, std::string> member_names;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> member_offsets;
  std::map<uint32_t, uint32_t> binding, set, spec_id;
  std::map<uint32_t, bool> buffer_block;                       // struct id -> BufferBlock (old-style SSBO)
  std::map<uint32_t, ShaderInterface::Scalar> scalars;         // 32-bit scalar types
  std::map<uint32_t, std::vector<uint32_t>> structs;           // struct id -> member type ids
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> pointers;  // id -> (storage class, pointee)
  std::vector<std::pair<uint32_t, uint32_t>> variables;        // (pointer type, id)
  std::map<uint32_t, uint32_t> image_dims;                     // image type id -> Dim
  std::map<uint32_t, uint32_t> sampled_images;                 // sampled image type id -> image type id
  std::map<uint32_t, std::vector<uint32_t>> composites;        // spec constant composite -> components
  uint32_t workgroup_size = 0;                                 // the WorkgroupSize composite, if any
  for (size_t i = 5; i < code.size();) {
    const uint32_t count = code[i] >> 16, op = code[i] & 0xffff;
    if (count == 0 || i + count > code.size()) throw std::runtime_error("truncated SPIR-V module");
    const std::span<const uint32_t> w = code.subspan(i, count);
    switch (op) {
      case OpName: names[w[1]] = literal_string(w.subspan(2)); break;
      case OpMemberName: member_names[{w[1], w[2]}] = literal_string(w.subspan(3)); break;
      case OpTypeInt:
        if (w[2] == 32) scalars[w[1]] = w[3] ? ShaderInterface::Scalar::i32 : ShaderInterface::Scalar::u32;
        break;
      case OpTypeFloat:
        if (w[2] == 32) scalars[w[1]] = ShaderInterface::Scalar::f32;
        break;
      case OpTypeImage: image_dims[w[1]] = w[3]; break;
      case OpTypeSampledImage: sampled_images[w[1]] = w[2]; break;
      case OpTypeStruct: structs[w[1]] = std::vector<uint32_t>(w.begin() + 2, w.end()); break;
      case OpTypePointer: pointers[w[1]] = {w[2], w[3]}; break;
      case OpSpecConstantComposite: composites[w[2]] = std::vector<uint32_t>(w.begin() + 3, w.end()); break;
      case OpVariable: variables.emplace_back(w[1], w[2]); break;
      case OpDecorate:
        if (w[2] == DecBinding) binding[w[1]] = w[3];
        if (w[2] == DecDescriptorSet) set[w[1]] = w[3];
        if (w[2] == DecBufferBlock) buffer_block[w[1]] = true;
        if (w[2] == DecSpecId) spec_id[w[1]] = w[3];
        if (w[2] == DecBuiltIn && w[3] == BuiltInWorkgroupSize) workgroup_size = w[1];
        break;
      case OpMemberDecorate:
        if (w[3] == DecOffset) member_offsets[{w[1], w[2]}] = w[4];
        break;
      default: break;
    }
    i += count;
  }
  ShaderInterface out;
  // `layout(local_size_x_id = N) in`: glslang gives the constant no name; it is "local_size_x".
  if (composites.count(workgroup_size))
    for (size_t k = 0; k < 3 && k < composites[workgroup_size].size(); ++k)
      names.emplace(composites[workgroup_size][k], std::string("local_size_") + "xyz"[k]);
  for (const auto& [id, constant_id] : spec_id) {
    const auto name = names.find(id);
    if (name == names.end() || name->second.empty())
      throw std::runtime_error("specialization constant " + std::to_string(constant_id) + " has no name");
    out.spec_constants[name->second] = constant_id;
  }
  for (const auto& [type, id] : variables) {
    if (!binding.count(id)) continue;
    if (set.count(id) && set[id] != 0) throw std::runtime_error("kvbench shaders use descriptor set 0 only");
    const auto [storage, pointee] = pointers.at(type);
    if (storage == ClassUniformConstant && sampled_images.count(pointee) &&
        image_dims[sampled_images[pointee]] == DimBuffer) {
      const std::string suffix = "_texels", name = names[id];
      if (name.size() <= suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        throw std::runtime_error("texel buffer " + name + " (binding " + std::to_string(binding[id]) +
                                 ") is not named TENSOR_texels");
      out.texel_buffers[binding[id]] = name.substr(0, name.size() - suffix.size());
      continue;
    }
    const bool is_ssbo = storage == ClassStorageBuffer || (storage == ClassUniform && buffer_block[pointee]);
    if (!is_ssbo && storage == ClassUniform && names[pointee] == "Params") {
      out.params_binding = binding[id];
      const auto& members = structs.at(pointee);
      for (uint32_t m = 0; m < members.size(); ++m) {
        const std::string name = unreserved(member_names[{pointee, m}]);
        if (!scalars.count(members[m]))
          throw std::runtime_error("Params member " + name + " is not a 32-bit scalar");
        out.params.push_back({name, member_offsets[{pointee, m}], scalars[members[m]]});
        out.params_bytes = std::max(out.params_bytes, member_offsets[{pointee, m}] + 4);
      }
      continue;
    }
    if (!is_ssbo)
      throw std::runtime_error("binding " + std::to_string(binding[id]) +
                               " is neither a storage buffer, a texel buffer nor Params");
    out.buffers[binding[id]].push_back(unreserved(member_names[{pointee, 0}]));
  }
  return out;
}

}  // namespace kvbench
