#include "golden/safetensors.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace kvbench {

const char* safetensors_dtype(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::i8: return "I8";
    case DType::u8: case DType::s4: case DType::u4: return "U8";
    case DType::i32: return "I32";
    case DType::i64: return "I64";
  }
  return "?";
}

std::string packing_name(DType t) {
  if (t == DType::s4) return "s4x2: two per byte, even flat index in the low nibble, two's complement";
  if (t == DType::u4) return "u4x2: two per byte, even flat index in the low nibble";
  return "none";
}

StoredTensor to_stored(const Tensor& t) {
  StoredTensor s{safetensors_dtype(t.dtype()), t.shape(), t.bytes()};
  if (dtype_bits(t.dtype()) == 4) s.shape = {static_cast<int64_t>(t.bytes().size())};
  return s;
}

StoredTensor f64_stored(const std::vector<double>& values, const Shape& shape) {
  StoredTensor s{"F64", shape, std::vector<uint8_t>(values.size() * 8)};
  std::memcpy(s.bytes.data(), values.data(), s.bytes.size());
  return s;
}

void write_safetensors(const std::string& path, const SafetensorsFile& file) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {  // std::map: name order
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& [name, t] : file.tensors)
      out.write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  std::filesystem::rename(tmp, path);
}

SafetensorsFile read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  uint8_t len[8];
  if (!in.read(reinterpret_cast<char*>(len), 8)) throw std::runtime_error(path + ": not a safetensors file (too short)");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(len[i]) << (8 * i);
  if (n > (100u << 20)) throw std::runtime_error(path + ": not a safetensors file (header length " + std::to_string(n) + ")");
  std::string text(n, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(n))) throw std::runtime_error(path + ": truncated header");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": invalid safetensors header: " + e.what());
  }
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SafetensorsFile f;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      for (auto m = it->begin(); m != it->end(); ++m) f.metadata[m.key()] = m->get<std::string>();
      continue;
    }
    StoredTensor t;
    t.dtype = (*it)["dtype"].get<std::string>();
    t.shape = (*it)["shape"].get<std::vector<int64_t>>();
    const auto offsets = (*it)["data_offsets"].get<std::vector<uint64_t>>();
    if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data.size())
      throw std::runtime_error(path + ": tensor " + it.key() + " has data offsets outside the file");
    t.bytes.assign(data.begin() + static_cast<std::ptrdiff_t>(offsets[0]), data.begin() + static_cast<std::ptrdiff_t>(offsets[1]));
    f.tensors[it.key()] = std::move(t);
  }
  return f;
}

}  // namespace kvbench
