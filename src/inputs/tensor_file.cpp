#include "inputs/tensor_file.hpp"

#include <cctype>
#include <cstring>
#include <filesystem>

#include "golden/safetensors.hpp"

namespace kvbench {
namespace {

constexpr uint64_t kMaxNpyHeader = 1u << 20;  // numpy writes a few hundred bytes

[[noreturn]] void bad_file(const std::string& m) { throw TensorFileError(FileFault::file, m); }

// The Python dict literal of a .npy header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class NpyHeaderParser {
 public:
  explicit NpyHeaderParser(std::string text) : s_(std::move(text)) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        if (peek('[')) bad_file("the .npy holds a structured array (a record dtype), not a tensor");
        descr = quoted();
        has_descr = true;
      } else if (key == "fortran_order") {
        fortran = word() == "True";
        has_order = true;
      } else if (key == "shape") {
        shape = tuple();
        has_shape = true;
      } else {
        bad_file("the .npy header has an unknown key '" + key + "'");
      }
      if (!peek(',')) break;
      expect(',');
    }
    expect('}');
    if (!has_descr || !has_order || !has_shape)
      bad_file("the .npy header lacks descr, fortran_order or shape");
  }

 private:
  void space() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }
  bool peek(char c) {
    space();
    return at_ < s_.size() && s_[at_] == c;
  }
  void expect(char c) {
    if (!peek(c))
      bad_file(std::string("the .npy header is malformed (expected '") + c + "' at character " +
               std::to_string(at_) + ")");
    ++at_;
  }
  std::string quoted() {
    space();
    if (at_ >= s_.size() || (s_[at_] != '\'' && s_[at_] != '"'))
      bad_file("the .npy header is malformed (expected a string)");
    const char q = s_[at_++];
    const size_t end = s_.find(q, at_);
    if (end == std::string::npos) bad_file("the .npy header is malformed (an unterminated string)");
    std::string out = s_.substr(at_, end - at_);
    at_ = end + 1;
    return out;
  }
  std::string word() {
    space();
    const size_t start = at_;
    while (at_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[at_]))) ++at_;
    const std::string w = s_.substr(start, at_ - start);
    if (w != "True" && w != "False")
      bad_file("the .npy header is malformed (fortran_order is not True or False)");
    return w;
  }
  Shape tuple() {
    expect('(');
    Shape shape;
    uint64_t numel = 1;
    while (!peek(')')) {
      space();
      size_t start = at_;
      while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) ++at_;
      if (start == at_ || at_ - start > 15)
        bad_file("the .npy header is malformed (a shape entry is not a size)");
      const int64_t n = std::stoll(s_.substr(start, at_ - start));
      if (n != 0 && numel > (uint64_t{1} << 48) / static_cast<uint64_t>(n))
        bad_file("the .npy shape has more than 2^48 elements");
      numel *= static_cast<uint64_t>(n);
      shape.push_back(n);
      if (!peek(',')) break;
      expect(',');
    }
    expect(')');
    return shape;
  }

  std::string s_;
  size_t at_ = 0;
};

// numpy's type string to kvbench's dtype and the element's bits.
void npy_type(const std::string& descr, TensorFileEntry& e) {
  if (descr.size() < 3) bad_file("the .npy element type '" + descr + "' is not one kvbench reads");
  const char order = descr[0];
  const std::string kind = descr.substr(1);
  const bool one_byte = kind.size() == 2 && kind[1] == '1';
  if (order == '>' && !one_byte)
    bad_file("the .npy is big-endian ('" + descr + "'): write it little-endian (numpy: astype('<" + kind +
             "'))");
  if (order != '<' && order != '|' && order != '=' && order != '>')
    bad_file("the .npy element type '" + descr + "' is not one kvbench reads");
  static const struct {
    const char* kind;
    std::optional<DType> dtype;
    int bits;
  } kTypes[] = {{"f2", DType::f16, 16}, {"f4", DType::f32, 32},    {"i1", DType::i8, 8},
                {"u1", DType::u8, 8},   {"b1", DType::boolean, 8}, {"i4", DType::i32, 32},
                {"i8", DType::i64, 64}, {"u2", std::nullopt, 16},  {"i2", std::nullopt, 16}};
  for (const auto& t : kTypes)
    if (kind == t.kind) {
      e.dtype = t.dtype;
      e.bits = t.bits;
      e.stored = descr;
      return;
    }
  if (kind == "f8")
    bad_file("the .npy holds float64, which no kvbench tensor is: convert it (numpy: astype(np.float32))");
  bad_file("the .npy element type '" + descr +
           "' is not one kvbench reads (f2, f4, i1, u1, b1, i4, i8, and u2/i2 with \"dtype\")");
}

TensorFileEntry npy_entry(const RegularFile& file) {
  uint8_t head[12] = {};
  if (file.size() < 10)
    bad_file("the .npy is truncated: " + std::to_string(file.size()) + " bytes, shorter than its preamble");
  file.read_at(0, std::span<uint8_t>(head, std::min<uint64_t>(12, file.size())));
  const int major = head[6];
  if (major < 1 || major > 3)
    bad_file("the .npy format version " + std::to_string(major) + " is not 1, 2 or 3");
  const uint64_t len_bytes = major == 1 ? 2 : 4;
  const uint64_t header_len = major == 1 ? head[8] | (head[9] << 8)
                                         : uint64_t{head[8]} | uint64_t{head[9]} << 8 |
                                               uint64_t{head[10]} << 16 | uint64_t{head[11]} << 24;
  if (header_len > kMaxNpyHeader)
    bad_file("the .npy header claims " + std::to_string(header_len) + " bytes (more than 1 MiB)");
  const uint64_t start = 8 + len_bytes;
  if (file.size() < start + header_len)
    bad_file("the .npy is truncated: its header needs " + std::to_string(start + header_len) +
             " bytes, the file has " + std::to_string(file.size()));
  std::string text(header_len, '\0');
  file.read_at(start, std::span<uint8_t>(reinterpret_cast<uint8_t*>(text.data()), text.size()));
  TensorFileEntry e;
  e.format = "npy";
  std::string descr;
  bool fortran = false;
  NpyHeaderParser(text).parse(descr, fortran, e.shape);
  npy_type(descr, e);
  if (fortran) bad_file("the .npy is in Fortran order: write it in C order (numpy: np.ascontiguousarray)");
  e.offset = start + header_len;
  e.bytes = static_cast<uint64_t>(shape_numel(e.shape)) * static_cast<uint64_t>(e.bits) / 8;
  if (file.size() < e.offset + e.bytes)
    bad_file("the .npy is truncated: " + shape_string(e.shape) + " of " + descr + " needs " +
             std::to_string(e.bytes) + " bytes of data, the file has " +
             std::to_string(file.size() - e.offset));
  if (file.size() > e.offset + e.bytes)
    bad_file("the .npy has " + std::to_string(file.size() - e.offset - e.bytes) +
             " bytes after its data: not one array");
  return e;
}

TensorFileEntry safetensors_entry(const RegularFile& file, const std::string& tensor) {
  SafetensorsIndex index;
  try {
    index = index_safetensors(
        file.size(), [&](uint64_t at, std::span<uint8_t> b) { file.read_at(at, b); }, "the safetensors file");
  } catch (const FileError& e) {
    bad_file(e.what());
  }
  std::string name = tensor;
  if (name.empty()) {
    if (index.tensors.size() != 1)
      throw TensorFileError(FileFault::tensor, "the safetensors file holds " +
                                                   std::to_string(index.tensors.size()) +
                                                   " tensors: name one with \"tensor\"");
    name = index.tensors.begin()->first;
  }
  auto it = index.tensors.find(name);
  if (it == index.tensors.end()) {
    std::string names;
    size_t shown = 0;
    for (const auto& [n, entry] : index.tensors)
      if (shown++ < 8) names += (names.empty() ? "" : ", ") + n;
    if (index.tensors.size() > 8) names += ", ...";
    throw TensorFileError(FileFault::tensor, "the safetensors file has no tensor '" + name + "' (it has " +
                                                 (names.empty() ? std::string("none") : names) + ")");
  }
  const TensorEntry& t = it->second;
  TensorFileEntry e;
  e.format = "safetensors";
  e.stored = t.dtype;
  e.shape = t.shape;
  e.offset = index.data_start + t.begin;
  e.bytes = t.end - t.begin;
  static const struct {
    const char* name;
    std::optional<DType> dtype;
    int bits;
  } kTypes[] = {{"F32", DType::f32, 32},
                {"F16", DType::f16, 16},
                {"BF16", DType::bf16, 16},
                {"I8", DType::i8, 8},
                {"U8", DType::u8, 8},
                {"BOOL", DType::boolean, 8},
                {"I32", DType::i32, 32},
                {"I64", DType::i64, 64},
                {"U16", std::nullopt, 16},
                {"I16", std::nullopt, 16},
                {"F8_E4M3", DType::f8e4m3fn, 8},
                {"F8_E5M2", DType::f8e5m2, 8}};
  for (const auto& k : kTypes)
    if (t.dtype == k.name) {
      e.dtype = k.dtype;
      e.bits = k.bits;
      return e;
    }
  bad_file("tensor '" + name + "' is " + t.dtype +
           ", which no kvbench tensor is (F32, F16, BF16, F8_E4M3, F8_E5M2, I8, U8, BOOL, I32, I64)");
}

}  // namespace

TensorFileEntry read_tensor_entry(const RegularFile& file, const std::string& tensor) {
  uint8_t magic[6] = {};
  if (file.size() >= 6) file.read_at(0, magic);
  if (std::memcmp(magic, "\x93NUMPY", 6) == 0) {
    if (!tensor.empty())
      throw TensorFileError(FileFault::tensor, "a .npy holds one array: \"tensor\" is for safetensors files");
    return npy_entry(file);
  }
  const std::string ext = std::filesystem::path(file.path()).extension().string();
  if (ext == ".npy") bad_file("the file is named .npy but does not start with numpy's magic bytes");
  if (ext != ".safetensors")
    bad_file("neither a .npy (by its magic bytes) nor a .safetensors file (by its name)");
  return safetensors_entry(file, tensor);
}

std::string entry_type_name(const TensorFileEntry& e) {
  return e.dtype ? std::string(dtype_name(*e.dtype))
                 : e.stored + " (" + std::to_string(e.bits) + "-bit integers)";
}

}  // namespace kvbench
