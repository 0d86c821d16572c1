// run --backend's protocol (src/runner/backend.cpp): what each way a backend ends makes of
// its case. Exit 77 is "not implemented by the backend": a SKIP, never a pass or a failure.
#include <doctest/doctest.h>

#include "cases/case_loader.hpp"
#include "runner/backend.hpp"

using namespace kvbench;

namespace {

// One tiny KeyValueCache case and its operator's instance.
struct TinyCase {
  CaseDef def;
  std::unique_ptr<OpCase> op;
  TinyCase() {
    const auto doc = nlohmann::json::parse(R"({
      "op": "pmx.KeyValueCache", "name": "tiny_backend", "seed": 3,
      "attributes": {"num_layer": 1, "layer_idx": 0, "quant_bit": 8, "quant_group": 4},
      "shapes": {"batch": 1, "seqlen": 1, "num_heads": 1, "head_dim": 4, "max_seqlen": 2},
      "inputs": {"start_pos": 0}
    })");
    auto loaded = expand_case_document(doc, "tiny_backend.json", {});
    REQUIRE(loaded.errors.empty());
    REQUIRE(loaded.cases.size() == 1);
    def = loaded.cases[0];
    op = instantiate_case(*find_operator("pmx.KeyValueCache"), def, {});
  }
  CaseResult run(const std::string& command) const {
    return run_case_on_backend(def, *op, {.command = command});
  }
};

}  // namespace

TEST_CASE("run --backend: exit 77 skips the case as not implemented, with what the backend printed") {
  const TinyCase c;
  const CaseResult r = c.run("echo 'no int8 cache here'; exit 77");
  CHECK(r.status == Status::skip);
  CHECK(r.reason.find("not implemented by the backend (it exited with status 77)") != std::string::npos);
  CHECK(r.reason.find("no int8 cache here") != std::string::npos);
  CHECK(r.outputs.empty());
}

TEST_CASE("run --backend: other exits fail the case; 0 without a file fails it too") {
  const TinyCase c;
  const CaseResult bad = c.run("exit 76");
  CHECK(bad.status == Status::fail);
  CHECK(bad.reason.find("exited with status 76") != std::string::npos);
  const CaseResult none = c.run("true");
  CHECK(none.status == Status::fail);
  CHECK(none.reason.find("wrote no tiny_backend.safetensors") != std::string::npos);
  CHECK(kBackendNotImplemented == 77);
}
