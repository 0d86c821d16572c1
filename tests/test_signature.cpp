// Declared signatures: every case-file section rejects what the operator does not declare,
// defaults are resolved and reported, failures stay inside their file, skips come first.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "case_helpers.hpp"
#include "cli_runner.hpp"
#include "core/error.hpp"
#include "ref/quant.hpp"
#include "runner/run_case.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

TEST_CASE(
    "signature: an unknown key in any section makes its file invalid with file and pointer; the rest runs") {
  const auto r = run_kvbench("run " + source_path("tests/data/unknown_keys"));
  CHECK(r.status == 2);
  auto has = [&](const std::string& s) { return r.output.find(s) != std::string::npos; };
  CHECK(
      has("unknown_keys/attributes.json: /attributes/is_albi (case uk_attributes): unknown key 'is_albi' in "
          "attributes (did you mean 'is_alibi'?)"));
  CHECK(
      has("unknown_keys/shapes.json: /shapes/num_kv_heads (case uk_shapes[num_kv_heads=1]): 'num_kv_heads' "
          "belongs in attributes, not shapes"));
  CHECK(
      has("unknown_keys/inputs.json: /inputs/start_post (case uk_inputs): unknown key 'start_post' in inputs "
          "(did you mean 'start_pos'?)"));
  CHECK(
      has("unknown_keys/dtypes.json: /dtypes/T1 (case uk_dtypes): unknown key 'T1' in dtypes; it takes "
          "query, current_key"));
  CHECK(
      has("unknown_keys/ranges.json: /ranges/current_kye (case uk_ranges): unknown key 'current_kye' in "
          "ranges (did you mean 'current_key'?)"));
  CHECK(
      has("unknown_keys/tolerance.json: /tolerance/output (case uk_tolerance): unknown key 'output' in "
          "tolerance; it takes cache, scale, attn_output"));
  // A value of the wrong type is the file's error, not the run's end (it used to abort with exit 134).
  CHECK(
      has("unknown_keys/wrong_type.json: /attributes/scale (case uk_wrong_type): scale must be a finite "
          "number, got \"big\""));
  CHECK(has("PASS  uk_valid"));
  CHECK(has("1 passed, 0 failed, 0 skipped"));
}

TEST_CASE("signature: list reports the same errors and exits 2") {
  const auto r = run_kvbench("list " + source_path("tests/data/unknown_keys"));
  CHECK(r.status == 2);
  CHECK(r.output.find("uk_valid  pmx.KeyValueCache") != std::string::npos);
  CHECK(r.output.find("/attributes/is_albi") != std::string::npos);
}

TEST_CASE("signature: values are checked against the declared type, allowed values and bounds") {
  auto error_of = [](nlohmann::json doc) -> std::string {
    auto loaded = expand_case_document(doc, "t.json", {});
    REQUIRE(loaded.cases.size() == 1);
    try {
      instantiate_case(*find_operator(doc["op"]), loaded.cases[0], {});
    } catch (const CaseError& e) {
      return e.pointer() + ": " + e.what();
    }
    return "";
  };
  nlohmann::json kvc = nlohmann::json::parse(R"({"op": "pmx.KeyValueCache", "name": "t", "seed": 1,
    "attributes": {"num_layer": 1, "layer_idx": 0, "quant_bit": 8},
    "shapes": {"batch": 1, "seqlen": 2, "num_heads": 2, "head_dim": 16, "max_seqlen": 8},
    "inputs": {"start_pos": 1}})");
  CHECK(error_of(kvc) == "");
  auto with = [&](const std::string& section, const std::string& key, nlohmann::json v) {
    nlohmann::json d = kvc;
    d[section][key] = v;
    return error_of(d);
  };
  CHECK(with("attributes", "quant_bit", 2) ==
        "/attributes/quant_bit: quant_bit must be one of 0, 8, 4, got 2");
  CHECK(with("attributes", "num_layer", 0) == "/attributes/num_layer: num_layer must be at least 1, got 0");
  CHECK(with("attributes", "num_layer", 1.5) ==
        "/attributes/num_layer: num_layer must be an integer, got 1.5");
  CHECK(with("attributes", "num_layer", "1") ==
        "/attributes/num_layer: num_layer must be an integer, got \"1\"");
  nlohmann::json missing = kvc;
  missing["shapes"].erase("max_seqlen");
  CHECK(error_of(missing).find("/shapes/max_seqlen: max_seqlen is required") == 0);
  // A dtype outside the tensor's declared choices, and one for a tensor whose dtype is derived.
  CHECK(with("dtypes", "current_key", "bf16") ==
        "/dtypes/current_key: dtype of current_key must be T1: f16 (default) or f32, got \"bf16\"");
  CHECK(with("dtypes", "cache", "i8")
            .find("/dtypes/cache: the dtype of cache is not chosen by the case file") == 0);
  CHECK(with("dtypes", "current_value", "f32") ==
        "/dtypes/current_value: current_value must have the dtype of current_key (f16)");
}

TEST_CASE("signature: defaults and derived values are resolved and reported with every tensor's dtype") {
  auto op =
      instantiate(nlohmann::json::parse(R"({"op": "pmx.dynamic_batching.MultiHeadCacheAttention", "name": "t",
    "seed": 1, "attributes": {"num_heads": 4, "head_dim": 64, "is_causal": true},
    "inputs": {"seqlens": [2], "start_pos": [3]}})"));
  const nlohmann::json r = op->resolved();
  CHECK(r["attributes"]["num_kv_heads"] == 4);  // the document's 0 = num_heads, resolved
  CHECK(r["attributes"]["quant_bit"] == 0);
  CHECK(r["attributes"]["is_alibi"] == false);
  CHECK(r["inputs"]["decoding_batches"] == 0);
  CHECK(r["dtypes"]["query"] == "f16");
  CHECK(r["dtypes"]["cache"] == "f16");
  CHECK(!r["dtypes"].contains("scale"));  // no scale tensor without quantization

  const auto sdpa =
      instantiate(nlohmann::json::parse(R"({"op": "dnnl.SDPACompressedKV", "name": "t", "seed": 1,
    "attributes": {"group_size": 32}, "shapes": {"N": 1, "H": 4, "S_q": 1, "S_kv": 8, "D": 64}})"));
  CHECK(sdpa->resolved()["shapes"]["H_kv"] == 4);
  CHECK(sdpa->resolved()["attributes"]["scale"] == 0.125);
}

TEST_CASE("ops: prints every operator's declared keys and tensors") {
  const auto r = run_kvbench("ops pmx.KeyValueCache");
  CHECK(r.status == 0);
  CHECK(r.output.find("quant_group") != std::string::npos);
  CHECK(r.output.find("default 8") != std::string::npos);
  CHECK(r.output.find("dtypes:    current_key, current_value, scale") != std::string::npos);
  const auto all = run_kvbench("ops --json");
  CHECK(all.status == 0);
  CHECK(nlohmann::json::parse(all.output).size() == operator_ids().size());
  CHECK(run_kvbench("ops no.Such").status == 2);
}

namespace {

const Signature& huge_signature() {
  static const Signature sig{.id = "test.Huge",
                             .tensors = {{.name = "big", .role = Role::output, .dtype_rule = "f32"}}};
  return sig;
}

// A case whose only tensor is larger than any storage buffer: reference() and
// make_tensors() must never be reached on the way to its SKIP.
class HugeCase final : public OpCase {
 public:
  HugeCase()
      : OpCase(Args(CaseDef{.file = "huge.json", .name = "huge", .op = "test.Huge"}, huge_signature(), {})) {}
  std::string describe() const override { return "huge"; }
  std::vector<TensorSpec> tensor_specs() const override { return {{"big", DType::f32, {int64_t{1} << 31}}}; }
  void fill(Tensor&) const override { throw std::logic_error("fill must not run"); }
  std::vector<Expected> reference(const TensorSet&) const override {
    throw std::logic_error("reference must not run");
  }
  double run_vulkan(Runtime&, TensorSet&) const override {
    throw std::logic_error("run_vulkan must not run");
  }
};

class ThrowingOperator final : public Operator {
 public:
  const Signature& signature() const override { return huge_signature(); }
  std::unique_ptr<OpCase> instantiate(Args) const override { throw std::out_of_range("vector::at"); }
};

}  // namespace

TEST_CASE("skip: a case over the device's buffer range is skipped before its reference or tensors exist") {
  Runtime rt;
  const HugeCase op;
  const CaseResult r = run_case(CaseDef{.file = "huge.json", .name = "huge", .op = "test.Huge"}, op, rt);
  CHECK(r.status == Status::skip);
  CHECK(r.reason.find("tensor big is 8589934592 bytes, over the maxStorageBufferRange") == 0);
}

TEST_CASE("instantiate_case: any exception inside an operator becomes the file's CaseError") {
  const ThrowingOperator op;
  try {
    instantiate_case(op, CaseDef{.file = "x.json", .name = "x", .op = "test.Huge"}, {});
    FAIL("no error");
  } catch (const CaseError& e) {
    CHECK(e.pointer() == "");
    CHECK(std::string(e.what()) == "the case could not be instantiated: vector::at");
  }
}

TEST_CASE("goldens: a zero code is +0.0 and dequantizes to +0.0") {
  // -0.001 / (1/127) = -0.127: rne gives -0.0 in IEEE arithmetic, which a code must not be.
  const double x[] = {-0.001, 1.0};
  const GroupCodes g = quantize_symmetric(x, 2, 127, DType::f16);
  CHECK(g.code[0] == 0);
  CHECK(!std::signbit(g.code[0]));
  CHECK(!std::signbit(dequant_ppl(g.code[0], g.scale, DType::f16, DType::f16)));
  const GroupCodes u = quantize_asymmetric(x, 2, 0, 255, DType::f16);  // zero point 0
  CHECK(u.zero_point == 0);
  CHECK(u.code[0] == 0);
  CHECK(!std::signbit(u.code[0]));
}

TEST_CASE(
    "run: an 8.6 GB case is over the memory budget, or skipped from its shapes alone; resolved defaults "
    "reported") {
  // Its cache and golden (~125 GB of host memory) are over the default budget: invalid,
  // named from its shapes, before anything is allocated.
  const auto over = run_kvbench("run " + source_path("tests/data/oversize"));
  CHECK(over.status == 2);
  CHECK(over.output.find(
            "oversize/kvc_8gb_cache.json: /shapes (case kvc_8gb_cache): tensor cache [64,32,2,1024,8,128] "
            "brings the case to ") != std::string::npos);
  CHECK(over.output.find("1 passed, 0 failed, 0 skipped") != std::string::npos);
  // With a budget that admits it, the device cannot hold it: SKIP, still without allocating.
  const auto path = std::filesystem::temp_directory_path() / "kvbench_test_oversize.json";
  const auto r = run_kvbench("run " + source_path("tests/data/oversize") + " --memory-budget 1T --json " +
                             path.string());
  CHECK(r.status == 0);
  CHECK(r.output.find("SKIP  kvc_8gb_cache") != std::string::npos);
  CHECK(r.output.find("1 passed, 0 failed, 1 skipped") != std::string::npos);
  std::ifstream in(path);
  const nlohmann::json report = nlohmann::json::parse(in);
  for (const auto& c : report["cases"]) {
    if (c["name"] == "kvc_8gb_cache")
      CHECK(c["reason"].get<std::string>().find("tensor cache has 4294967296 elements") == 0);
    if (c["name"] != "kvc_small_defaults") continue;
    CHECK(c["resolved"]["attributes"]["quant_group"] == 8);  // defaults, not only what was written
    CHECK(c["resolved"]["attributes"]["cache_layout"] == 0);
    CHECK(c["resolved"]["shapes"]["max_batch"] == 1);  // derived from batch
    CHECK(c["resolved"]["dtypes"]["cache"] == "i8");
  }
}
