#include "golden/safetensors.hpp"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

namespace kvbench {

const char* safetensors_dtype(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::i8: return "I8";
    case DType::u8:
    case DType::s4:
    case DType::u4:
    case DType::f4e2m1:
    case DType::f4e1m2:
    case DType::f8e8m0:
    case DType::hifloat8:
    case DType::f6e2m3:
    case DType::f6e3m2: return "U8";
    case DType::i32: return "I32";
    case DType::i64: return "I64";
    case DType::boolean: return "BOOL";
    case DType::f8e4m3fn: return "F8_E4M3";
    case DType::f8e5m2: return "F8_E5M2";
  }
  return "?";
}

uint64_t safetensors_element_bytes(std::string_view dtype) {
  static const std::map<std::string_view, uint64_t> sizes{
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I64", 8}, {"I32", 4},
      {"I16", 2}, {"I8", 1},  {"U64", 8}, {"U32", 4},  {"U16", 2},     {"U8", 1},      {"BOOL", 1}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

std::string packing_name(DType t) {
  if (t == DType::s4) return "s4x2: two per byte, even flat index in the low nibble, two's complement";
  if (t == DType::u4) return "u4x2: two per byte, even flat index in the low nibble";
  if (t == DType::f4e2m1 || t == DType::f4e1m2)
    return std::string(dtype_name(t)) +
           "x2: two 4-bit floats per byte (sign, exponent, mantissa; bias 1), even flat index in the low "
           "nibble";
  if (t == DType::f8e8m0) return "f8e8m0: one byte per element, the power of two 2^(byte - 127), 0xFF NaN";
  if (t == DType::hifloat8)
    return "hifloat8: one byte per element, a HiFloat8 code (specs/hifloat8.md), 0x80 NaN, 0x6F/0xEF +-Inf";
  if (t == DType::f6e2m3 || t == DType::f6e3m2)
    return std::string(dtype_name(t)) +
           ": one OCP MX 6-bit float per byte, in its low 6 bits (sign, exponent, mantissa), bits 6-7 zero";
  return "none";
}

Shape stored_shape(DType dtype, const Shape& shape) {
  if (dtype_bits(dtype) != 4) return shape;
  return {static_cast<int64_t>(dtype_storage_bytes(dtype, shape_numel(shape)))};
}

StoredTensor to_stored(const Tensor& t) {
  return StoredTensor{safetensors_dtype(t.dtype()), stored_shape(t.dtype(), t.shape()), t.bytes()};
}

StoredTensor stored_view(const Tensor& t) {
  return StoredTensor{.dtype = safetensors_dtype(t.dtype()),
                      .shape = stored_shape(t.dtype(), t.shape()),
                      .borrowed = t.bytes()};
}

void write_safetensors(AtomicFile& out, const SafetensorsFile& file) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {  // std::map: name order
    header[name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data().size()}}};
    offset += t.data().size();
  }
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
  out.write(std::span<const uint8_t>(len, 8));
  out.write(text);
  for (const auto& [name, t] : file.tensors) out.write(t.data());
}

void write_safetensors(const std::string& path, const SafetensorsFile& file) {
  AtomicFile out(path);
  write_safetensors(out, file);
  out.commit();
}

namespace {

using nlohmann::json;

// The header's JSON, with nesting bounded before any value is built.
json parse_header_json(std::string_view text, const std::string& where) {
  const json::parser_callback_t depth_guard = [&where](int depth, json::parse_event_t, json&) {
    if (depth > kMaxSafetensorsHeaderDepth)
      throw FileError(where + ": invalid safetensors header: nested deeper than " +
                      std::to_string(kMaxSafetensorsHeaderDepth) + " levels");
    return true;
  };
  try {
    json header = json::parse(text.begin(), text.end(), depth_guard);
    if (!header.is_object()) throw FileError(where + ": invalid safetensors header: not a JSON object");
    return header;
  } catch (const json::exception& e) {
    throw FileError(where + ": invalid safetensors header: " + e.what());
  }
}

uint64_t unsigned_value(const json& v, bool& ok) {
  ok = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
  return ok ? v.get<uint64_t>() : 0;
}

TensorEntry parse_entry(const std::string& name, const json& v, uint64_t data_bytes,
                        const std::string& where) {
  const std::string at = where + ": tensor '" + name + "': ";
  if (!v.is_object()) throw FileError(at + "header entry is not an object");
  TensorEntry e;
  auto dtype = v.find("dtype");
  if (dtype == v.end() || !dtype->is_string()) throw FileError(at + "dtype is missing or not a string");
  e.dtype = dtype->get<std::string>();
  const uint64_t element = safetensors_element_bytes(e.dtype);
  if (element == 0) throw FileError(at + "unknown dtype '" + e.dtype + "'");
  auto shape = v.find("shape");
  if (shape == v.end() || !shape->is_array()) throw FileError(at + "shape is missing or not an array");
  uint64_t bytes = element;
  bool overflow = false;
  for (const auto& d : *shape) {
    bool ok = false;
    const uint64_t n = unsigned_value(d, ok);
    if (!ok || n > static_cast<uint64_t>(INT64_MAX))
      throw FileError(at + "shape " + shape->dump() + " is not a list of sizes");
    overflow = overflow || __builtin_mul_overflow(bytes, n, &bytes);
    e.shape.push_back(static_cast<int64_t>(n));
  }
  auto offsets = v.find("data_offsets");
  bool ok = offsets != v.end() && offsets->is_array() && offsets->size() == 2;
  if (ok) {
    bool ok_begin = false, ok_end = false;
    e.begin = unsigned_value((*offsets)[0], ok_begin);
    e.end = unsigned_value((*offsets)[1], ok_end);
    ok = ok_begin && ok_end;
  }
  if (!ok) throw FileError(at + "data_offsets must be two byte offsets [begin, end]");
  if (e.begin > e.end)
    throw FileError(at + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                    "] are reversed");
  if (e.end > data_bytes)
    throw FileError(at + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                    "] lie outside the data section (" + std::to_string(data_bytes) +
                    " bytes): truncated or corrupt file");
  if (overflow || bytes != e.end - e.begin)
    throw FileError(at + "holds " + std::to_string(e.end - e.begin) + " bytes, but " + e.dtype +
                    " of shape " + shape_string(e.shape) + " needs " +
                    (overflow ? "more than 2^64" : std::to_string(bytes)));
  return e;
}

}  // namespace

SafetensorsIndex index_safetensors(uint64_t file_size, const ReadAt& read, const std::string& where) {
  if (file_size < 8)
    throw FileError(where + ": not a safetensors file (" + std::to_string(file_size) + " bytes)");
  uint8_t len[8];
  read(0, len);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(len[i]) << (8 * i);
  if (n > kMaxSafetensorsHeader)
    throw FileError(where + ": not a safetensors file (header length " + std::to_string(n) +
                    " exceeds the limit of " + std::to_string(kMaxSafetensorsHeader) + " bytes)");
  if (n > file_size - 8)
    throw FileError(where + ": truncated: the header needs " + std::to_string(n) + " bytes, the file has " +
                    std::to_string(file_size - 8) + " after the length");
  std::string text(n, '\0');
  read(8, std::span(reinterpret_cast<uint8_t*>(text.data()), text.size()));
  const json header = parse_header_json(text, where);
  SafetensorsIndex index;
  index.data_start = 8 + n;
  const uint64_t data_bytes = file_size - index.data_start;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) throw FileError(where + ": __metadata__ is not an object");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string())
          throw FileError(where + ": __metadata__ value '" + m.key() + "' is not a string");
        index.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    index.tensors[it.key()] = parse_entry(it.key(), *it, data_bytes, where);
  }
  // Two tensors must not share bytes: a write through one would change the other.
  std::vector<std::pair<const std::string*, const TensorEntry*>> by_offset;
  for (const auto& [name, e] : index.tensors)
    if (e.end > e.begin) by_offset.emplace_back(&name, &e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto& a, const auto& b) { return a.second->begin < b.second->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i].second->begin < by_offset[i - 1].second->end)
      throw FileError(where + ": tensors '" + *by_offset[i - 1].first + "' and '" + *by_offset[i].first +
                      "' overlap in the data section");
  return index;
}

std::vector<uint8_t> read_tensor_bytes(const SafetensorsIndex& index, const TensorEntry& entry,
                                       const ReadAt& read) {
  std::vector<uint8_t> bytes(entry.end - entry.begin);
  read(index.data_start + entry.begin, bytes);
  return bytes;
}

SafetensorsFile parse_safetensors(std::span<const uint8_t> bytes, const std::string& where) {
  const ReadAt read = [&](uint64_t offset, std::span<uint8_t> out) {
    if (offset > bytes.size() || out.size() > bytes.size() - offset) throw FileError(where + ": truncated");
    if (!out.empty())
      std::memcpy(out.data(), bytes.data() + offset, out.size());  // an empty span's data() may be null
  };
  const SafetensorsIndex index = index_safetensors(bytes.size(), read, where);
  SafetensorsFile f;
  f.metadata = index.metadata;
  for (const auto& [name, e] : index.tensors)
    f.tensors[name] = {e.dtype, e.shape, read_tensor_bytes(index, e, read)};
  return f;
}

SafetensorsReader::SafetensorsReader(const std::string& path) : file_(path) {
  index_ = index_safetensors(
      file_.size(), [this](uint64_t o, std::span<uint8_t> b) { file_.read_at(o, b); }, path);
}

const TensorEntry* SafetensorsReader::find(const std::string& name) const {
  auto it = index_.tensors.find(name);
  return it == index_.tensors.end() ? nullptr : &it->second;
}

std::vector<uint8_t> SafetensorsReader::read(const TensorEntry& entry) const {
  return read_tensor_bytes(index_, entry, [this](uint64_t o, std::span<uint8_t> b) { file_.read_at(o, b); });
}

void SafetensorsReader::read_chunks(const TensorEntry& entry,
                                    const std::function<void(std::span<const uint8_t>)>& take) const {
  file_.scan(index_.data_start + entry.begin, entry.end - entry.begin, take);
}

SafetensorsFile read_safetensors(const std::string& path) {
  const SafetensorsReader reader(path);
  SafetensorsFile f;
  f.metadata = reader.index().metadata;
  for (const auto& [name, e] : reader.index().tensors) f.tensors[name] = {e.dtype, e.shape, reader.read(e)};
  return f;
}

}  // namespace kvbench
