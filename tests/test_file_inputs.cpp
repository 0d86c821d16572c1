// Inputs from files: the .npy and safetensors readers, SHA-256 against known vectors, and
// case files that take tensors and index values from files (bit for bit, checked against
// what the case derives, counted against the memory budget, confined to the case's folder).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "cases/case_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "golden/safetensors.hpp"
#include "inputs/file_inputs.hpp"
#include "inputs/sha256.hpp"
#include "inputs/tensor_file.hpp"
#include "ops/operator.hpp"

using namespace kvbench;
namespace fs = std::filesystem;

namespace {

// A .npy file's bytes as numpy writes them (version 1, header padded to 64 bytes).
std::string npy(const std::string& descr, const Shape& shape, const std::string& data, bool fortran = false) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims += std::to_string(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': (" + dims + "), }";
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  const uint16_t len = static_cast<uint16_t>(header.size());
  return std::string("\x93NUMPY\x01\x00", 8) + std::string(reinterpret_cast<const char*>(&len), 2) + header +
         data;
}

template <typename T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

struct Folder {
  fs::path path = fs::temp_directory_path() / ("kvbench_file_inputs_" + std::to_string(::getpid()));
  Folder() {
    fs::remove_all(path);
    fs::create_directories(path / "dump");
  }
  ~Folder() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path / name, std::ios::binary) << bytes;
    return (path / name).string();
  }
};

TensorFileEntry entry_of(const std::string& path, const std::string& tensor = "") {
  return read_tensor_entry(RegularFile(path), tensor);
}

std::string fault_of(const std::string& path, const std::string& tensor = "") {
  try {
    entry_of(path, tensor);
  } catch (const TensorFileError& e) {
    return std::string(e.fault() == FileFault::tensor ? "tensor: " : "file: ") + e.what();
  }
  return "";
}

// The KeyValueCache case used below: current_key [1,2,2,16] f16, an unquantized cache.
nlohmann::json kvc_case(nlohmann::json inputs) {
  nlohmann::json doc = nlohmann::json::parse(R"({"op": "pmx.KeyValueCache", "name": "f", "seed": 3,
    "attributes": {"num_layer": 2, "layer_idx": 1, "quant_bit": 0},
    "shapes": {"batch": 1, "seqlen": 2, "num_heads": 2, "head_dim": 16, "max_seqlen": 8}})");
  doc["inputs"] = std::move(inputs);
  if (!doc["inputs"].contains("start_pos")) doc["inputs"]["start_pos"] = 1;
  return doc;
}

std::unique_ptr<OpCase> instantiate_in(const Folder& f, const nlohmann::json& doc, size_t expansion = 0,
                                       const RunOptions& options = {}) {
  auto loaded = expand_case_document(doc, (f.path / "case.json").string(), options);
  REQUIRE(loaded.errors.empty());
  return instantiate_case(*find_operator(doc["op"]), loaded.cases.at(expansion), options);
}

std::string error_in(const Folder& f, const nlohmann::json& doc, const RunOptions& options = {}) {
  try {
    instantiate_in(f, doc, 0, options);
  } catch (const CaseError& e) {
    return e.pointer() + ": " + e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("file inputs: SHA-256 of the standard vectors") {
  auto hex = [](const std::string& s) {
    return sha256_hex({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
  };
  CHECK(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;  // a million 'a' in pieces
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i)
    million.update({reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size()});
  CHECK(million.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("file inputs: .npy headers, and every malformed .npy named") {
  const Folder f;
  const TensorFileEntry e = entry_of(f.write("a.npy", npy("<f4", {2, 3}, std::string(24, '\0'))));
  CHECK(e.format == "npy");
  CHECK(e.dtype == DType::f32);
  CHECK(e.shape == Shape{2, 3});
  CHECK(e.offset == 128);  // numpy pads the preamble and header to a multiple of 64 bytes
  CHECK(e.bytes == 24);
  CHECK(entry_of(f.write("s.npy", npy("<i8", {}, std::string(8, '\0')))).shape == Shape{});
  CHECK(entry_of(f.write("v.npy", npy("|b1", {5}, std::string(5, '\0')))).dtype == DType::boolean);
  CHECK(!entry_of(f.write("u.npy", npy("<u2", {4}, std::string(8, '\0')))).dtype);  // needs "dtype"
  CHECK(fault_of(f.write("t.npy", npy("<f4", {2, 3}, std::string(20, '\0'))))
            .find("file: the .npy is truncated: [2,3] of <f4 needs 24 bytes of data, the file has 20") == 0);
  CHECK(fault_of(f.write("x.npy", npy("<f4", {2}, std::string(12, '\0')))).find("4 bytes after its data") !=
        std::string::npos);
  CHECK(fault_of(f.write("b.npy", npy(">f4", {2}, std::string(8, '\0')))).find("big-endian") !=
        std::string::npos);
  CHECK(fault_of(f.write("o.npy", npy("<f4", {2, 2}, std::string(16, '\0'), true))).find("Fortran order") !=
        std::string::npos);
  CHECK(fault_of(f.write("d.npy", npy("<f8", {2}, std::string(16, '\0')))).find("float64") !=
        std::string::npos);
  CHECK(fault_of(f.write("c.npy", npy("<c8", {2}, std::string(16, '\0')))).find("not one kvbench reads") !=
        std::string::npos);
  CHECK(fault_of(f.write("h.npy", std::string("\x93NUMPY\x01\x00\xff\x00{", 11))).find("truncated") !=
        std::string::npos);
  CHECK(fault_of(f.write("n.npy", "not numpy")).find("numpy's magic") != std::string::npos);
  CHECK(fault_of(f.write("a2.npy", npy("<f4", {2, 3}, std::string(24, '\0'))), "x")
            .find("tensor: a .npy holds one array") == 0);
}

TEST_CASE("file inputs: a safetensors tensor by name") {
  const Folder f;
  SafetensorsFile st;
  st.tensors["k"] = {"I8", {2, 4}, std::vector<uint8_t>(8, 1)};
  st.tensors["s"] = {"BF16", {4}, std::vector<uint8_t>(8, 0)};
  write_safetensors((f.path / "d.safetensors").string(), st);
  const std::string path = (f.path / "d.safetensors").string();
  CHECK(entry_of(path, "k").dtype == DType::i8);
  CHECK(entry_of(path, "s").dtype == DType::bf16);
  CHECK(entry_of(path, "k").shape == Shape{2, 4});
  CHECK(fault_of(path, "q") == "tensor: the safetensors file has no tensor 'q' (it has k, s)");
  CHECK(fault_of(path).find("tensor: the safetensors file holds 2 tensors") == 0);
}

TEST_CASE(
    "file inputs: a tensor from a file is used bit for bit, NaN and Inf reported; index values checked as "
    "written") {
  const Folder f;
  std::vector<uint16_t> key(64, 0x3c00);  // f16 1.0
  key[3] = 0x7e00;                        // NaN
  key[7] = 0xfc00;                        // -Inf
  f.write("dump/key.npy", npy("<f2", {1, 2, 2, 16}, raw(key)));
  f.write("dump/pos.npy", npy("<i8", {}, raw(std::vector<int64_t>{4})));
  auto c = instantiate_in(
      f, kvc_case({{"current_key", {{"file", "dump/key.npy"}}}, {"start_pos", {{"file", "dump/pos.npy"}}}}));
  CHECK(c->args().integer("start_pos") == 4);
  CHECK(c->description().find(
            " | from files: current_key=dump/key.npy (1 NaN, 1 Inf), start_pos=dump/pos.npy") !=
        std::string::npos);
  const TensorSet t = c->make_tensors();
  CHECK(std::memcmp(t.at("current_key").bytes().data(), key.data(), 128) == 0);
  CHECK(t.at("start_pos").get(0) == 4);
  CHECK(c->file_inputs().size() == 2);
  // The range check of an inline start_pos applies to one from a file.
  f.write("dump/far.npy", npy("<i8", {}, raw(std::vector<int64_t>{7})));
  CHECK(error_in(f, kvc_case({{"start_pos", {{"file", "dump/far.npy"}}}})).find("/inputs/start_pos: ") == 0);
  f.write("dump/two.npy", npy("<i8", {2}, raw(std::vector<int64_t>{1, 2})));
  CHECK(error_in(f, kvc_case({{"start_pos", {{"file", "dump/two.npy"}}}})) ==
        "/inputs/start_pos: dump/two.npy holds 2 values; start_pos is one integer");
  // A dtype or shape the case does not derive: both named.
  CHECK(error_in(f, kvc_case({{"current_value", {{"file", "dump/key.npy"}}}, {"start_pos", 1}})) == "");
  nlohmann::json f32 = kvc_case({{"current_key", {{"file", "dump/key.npy"}}}});
  f32["dtypes"] = {{"current_key", "f32"}, {"current_value", "f32"}};
  CHECK(error_in(f, f32) ==
        "/inputs/current_key: dump/key.npy is f16 [1,2,2,16]; this case's current_key is f32 [1,2,2,16]");
  nlohmann::json longer = kvc_case({{"current_key", {{"file", "dump/key.npy"}}}});
  longer["shapes"]["seqlen"] = 3;
  CHECK(error_in(f, longer) ==
        "/inputs/current_key: dump/key.npy is f16 [1,2,2,16]; this case's current_key is f16 [1,3,2,16]");
}

TEST_CASE("file inputs: a sweep varies other keys around a file; each expansion checks it") {
  const Folder f;
  f.write("dump/key.npy", npy("<f2", {1, 2, 2, 16}, std::string(128, '\0')));
  nlohmann::json doc = kvc_case({{"current_key", {{"file", "dump/key.npy"}}}});
  doc["sweep"] = {{"layer_idx", {0, 1}}};
  auto loaded = expand_case_document(doc, (f.path / "case.json").string(), {});
  REQUIRE(loaded.cases.size() == 2);
  for (const auto& def : loaded.cases)
    CHECK(instantiate_case(*find_operator("pmx.KeyValueCache"), def, {})->file_inputs().size() == 1);
}

TEST_CASE("file inputs: the memory budget counts them; they stay inside the case file's folder") {
  const Folder f;
  f.write("dump/key.npy", npy("<f2", {1, 2, 2, 16}, std::string(128, '\0')));
  // The file's tensor alone is 2 x 128 bytes.
  CHECK(error_in(f, kvc_case({{"current_key", {{"file", "dump/key.npy"}}}}), {.memory_budget = 200})
            .find("over the budget") != std::string::npos);
  // A link inside the folder to a file outside it leaves the folder too.
  const fs::path outside = f.path.string() + "_outside";
  fs::create_directories(outside);
  std::ofstream(outside / "x.npy", std::ios::binary) << npy("<f2", {1, 2, 2, 16}, std::string(128, '\0'));
  fs::create_symlink(outside / "x.npy", f.path / "dump" / "link.npy");
  CHECK(error_in(f, kvc_case({{"current_key", {{"file", "dump/link.npy"}}}}))
            .find("/inputs/current_key/file: 'dump/link.npy' is ") == 0);
  CHECK(error_in(
            f, kvc_case({{"current_key", {{"file", "../" + f.path.filename().string() + "_outside/x.npy"}}}}))
            .find("outside the case file's folder") != std::string::npos);
  CHECK(error_in(f, kvc_case({{"current_key", {{"file", "dump/link.npy"}}}}),
                 {.allow_outside_paths = true}) == "");
  fs::remove_all(outside);
}

TEST_CASE("file inputs: a file rewritten after its case was checked is not loaded") {
  const Folder f;
  f.write("dump/key.npy", npy("<f2", {1, 2, 2, 16}, std::string(128, '\0')));
  auto c = instantiate_in(f, kvc_case({{"current_key", {{"file", "dump/key.npy"}}}}));
  f.write("dump/key.npy", npy("<f2", {1, 2, 2, 16}, std::string(126, '\0') + "x"));
  CHECK_THROWS_WITH_AS(c->make_tensors(), doctest::Contains("changed after its case was checked"),
                       std::runtime_error);
}

TEST_CASE(
    "file inputs: FP4 codes (packed U8, \"dtype\": \"f4e2m1\") and E8M0 scales (U8 bytes) from files, bit "
    "for bit") {
  // The FP4 mode of FusedInferAttentionScoreV3 (keyAntiquantMode 6): K/V are packed FP4 codes,
  // their per-token-group scales FLOAT8_E8M0. Both were refused from files before: "f4e2m1" was
  // not a dtype the schema allowed, and a U8 file was "u8; this case's keyAntiquantScale is f8e8m0".
  const Folder f;
  nlohmann::json doc =
      nlohmann::json::parse(R"({"op": "aclnn.FusedInferAttentionScoreV3", "name": "fp4", "seed": 5,
    "attributes": {"numHeads": 2, "scaleValue": 1.0, "inputLayout": "BNSD", "keyAntiquantMode": 6},
    "shapes": {"B": 1, "S1": 1, "S2": 3, "D": 64}, "dtypes": {"key": "f4e2m1"}})");
  const TensorSet inline_tensors = instantiate_in(f, doc)->make_tensors();
  const Tensor& key = inline_tensors.at("key");
  const Tensor& scale = inline_tensors.at("keyAntiquantScale");
  REQUIRE(key.dtype() == DType::f4e2m1);
  REQUIRE(scale.dtype() == DType::f8e8m0);
  // A different seed's bytes, so that equality below comes from the files.
  std::string key_bytes(reinterpret_cast<const char*>(key.bytes().data()), key.bytes().size());
  std::string scale_bytes(reinterpret_cast<const char*>(scale.bytes().data()), scale.bytes().size());
  for (char& c : key_bytes) c = static_cast<char>(c ^ 0x5a);
  for (char& c : scale_bytes) c = static_cast<char>(c ^ 1);
  scale_bytes[0] = '\xff';  // E8M0's NaN
  f.write("dump/key.npy", npy("|u1", {static_cast<int64_t>(key_bytes.size())}, key_bytes));
  Shape scale_shape = scale.shape();
  f.write("dump/scale.npy", npy("|u1", scale_shape, scale_bytes));
  doc["inputs"] = {{"key", {{"file", "dump/key.npy"}, {"dtype", "f4e2m1"}}},
                   {"keyAntiquantScale", {{"file", "dump/scale.npy"}}}};
  CHECK(error_in(f, doc) == "");
  // Before the fix this hung: the NaN scan stepped through 4-bit elements 0 bytes at a time.
  const auto c = instantiate_in(f, doc);
  CHECK(c->description().find("key=dump/key.npy, keyAntiquantScale=dump/scale.npy (1 NaN, 0 Inf)") !=
        std::string::npos);
  const TensorSet t = c->make_tensors();
  CHECK(std::memcmp(t.at("key").bytes().data(), key_bytes.data(), key_bytes.size()) == 0);
  CHECK(std::memcmp(t.at("keyAntiquantScale").bytes().data(), scale_bytes.data(), scale_bytes.size()) == 0);
  // "dtype": "f8e8m0" says the same; FP4 codes without "dtype" are U8 bytes, not this case's key.
  doc["inputs"]["keyAntiquantScale"]["dtype"] = "f8e8m0";
  CHECK(error_in(f, doc) == "");
  doc["inputs"]["key"].erase("dtype");
  CHECK(error_in(f, doc).find("/inputs/key: dump/key.npy is u8 [") == 0);
}

TEST_CASE("file inputs: FIA keys of NaN are named as such, not as a fully masked row (issue 63)") {
  const Folder f;
  f.write("dump/key.npy", npy("<f2", {1, 4, 1, 16}, raw(std::vector<uint16_t>(64, 0x7e00))));  // f16 NaN
  const nlohmann::json doc = nlohmann::json::parse(R"({"op": "aclnn.FusedInferAttentionScoreV3", "name": "f",
    "seed": 3, "attributes": {"numHeads": 1, "scaleValue": 0.25, "inputLayout": "BSND"},
    "shapes": {"B": 1, "S1": 1, "S2": 4, "D": 16}, "inputs": {"key": {"file": "dump/key.npy"}}})");
  auto c = instantiate_in(f, doc);
  std::string what;
  try {
    (void)c->golden(c->make_tensors());
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  CHECK(what.find("has no finite score though keys are visible to it") != std::string::npos);
  CHECK(what.find("every key masked") == std::string::npos);
}

TEST_CASE(
    "file inputs: HiF8 and 6-bit float codes (U8 bytes with \"dtype\") counted and refused by the format") {
  // DequantizeGroup's x from a file: HiF8's NaN is 0x80 and its infinities 0x6F / 0xEF (they
  // were counted by f32's exponent mask before); a 6-bit float byte of 64 or more is no code.
  const Folder f;
  std::string codes(64, '\0');
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<char>(i * 3);
  codes[0] = '\x80';
  codes[1] = '\x6f';
  codes[2] = '\xef';
  f.write("dump/x.npy", npy("|u1", {2, 32}, codes));
  nlohmann::json doc = nlohmann::json::parse(R"({"op": "kvbench.DequantizeGroup", "name": "h", "seed": 1,
    "attributes": {"code_format": "hif8", "formula": "onednn", "group_size": 32},
    "shapes": {"rows": 2, "length": 32}, "inputs": {"x": {"file": "dump/x.npy", "dtype": "hifloat8"}}})");
  const auto c = instantiate_in(f, doc);
  // 0x6F also at element 37 (37 * 3 = 111).
  CHECK(c->description().find("x=dump/x.npy (1 NaN, 3 Inf)") != std::string::npos);
  CHECK(std::memcmp(c->make_tensors().at("x").bytes().data(), codes.data(), codes.size()) == 0);
  doc["attributes"]["code_format"] = "mxfp6_e2m3";
  doc["attributes"].erase("group_size");
  doc["inputs"]["x"]["dtype"] = "f6e2m3";
  CHECK(error_in(f, doc).find(
            "element 0 of the f6e2m3 tensor holds 128: a 6-bit float code is a byte below 64") !=
        std::string::npos);
  for (char& b : codes) b = static_cast<char>(b & 0x3f);
  f.write("dump/x.npy", npy("|u1", {2, 32}, codes));
  CHECK(error_in(f, doc) == "");
}
