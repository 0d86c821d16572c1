// `kvbench list --pipelines` and the pipeline warmer plan a case on the device without
// computing it: nothing uploaded, and a case that meets an error is reported by name while
// the others are still listed.
#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>

#include "runner/pipeline_list.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

namespace {

const Signature& planned_signature() {
  static const Signature sig{.id = "stub",
                             .tensors = {{.name = "x", .dtype_rule = "f32"},
                                         {.name = "y", .role = Role::output, .dtype_rule = "f32"}}};
  return sig;
}

// Uploads x and copies it with one dispatch; with `fails`, throws before dispatching.
class PlannedCopy final : public OpCase {
 public:
  PlannedCopy(const std::string& name, bool fails)
      : OpCase(Args(CaseDef{.file = "stub.json", .name = name, .op = "stub"}, planned_signature(), {})),
        fails_(fails) {}
  std::string describe() const override { return "planned copy"; }
  std::vector<TensorSpec> tensor_specs() const override {
    return {{"x", DType::f32, {4}}, {"y", DType::f32, {4}}};
  }
  void fill(Tensor& x) const override {
    for (size_t i = 0; i < 4; ++i) x.set(i, static_cast<double>(i));
  }
  std::vector<Expected> reference(const TensorSet& in) const override {
    const std::vector<double> x = in.at("x").values();
    return expected_list(Expected::output(in.at("y"), x, x));
  }
  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    if (fails_) throw std::runtime_error("no plan for this case");
    Batch batch(rt);
    Buffer* source = batch.buffer(64);
    Buffer* destination = batch.buffer(64);
    batch.upload(*destination, io.at("x").bytes());  // a buffer the batch already uses: staged
    batch.upload(*source, io.at("x").bytes());
    batch.dispatch("copy_bandwidth", {{"source", source}, {"destination", destination}}, {{"count", 1}}, 1);
    batch.download(*destination, io.at("y").bytes());
    return batch.submit();
  }

 private:
  bool fails_;
};

Selection planned(std::initializer_list<std::pair<const char*, bool>> cases) {
  Selection sel;
  for (const auto& c : cases)
    sel.cases.push_back({CaseDef{.file = "stub.json", .name = c.first, .op = "stub"},
                         std::make_unique<PlannedCopy>(c.first, c.second)});
  return sel;
}

}  // namespace

TEST_CASE("list --pipelines: a case that meets an error is named with it, and the next case is listed") {
  Runtime rt;
  const Selection sel = planned({{"first", false}, {"broken", true}, {"last", false}});
  std::ostringstream out;
  CHECK(list_pipelines(rt, sel, out) == 1);
  const std::string text = out.str();
  CHECK(text.find("first  pipelines: copy_bandwidth") != std::string::npos);
  CHECK(text.find("broken  error: no plan for this case\n") != std::string::npos);
  CHECK(text.find("last  pipelines: copy_bandwidth") != std::string::npos);
}

TEST_CASE("a planned case uploads nothing (the warmer plans each case before compiling it)") {
  Runtime rt;
  const Selection sel = planned({{"one", false}});
  std::ostringstream out;
  list_pipelines(rt, sel, out);
  CHECK(rt.uploaded_bytes() == 0);
  TensorSet io = sel.cases[0].op->make_tensors();
  sel.cases[0].op->run_vulkan(rt, io);  // plan_only is off again: the case runs
  CHECK(rt.uploaded_bytes() == 32);
  CHECK(io.at("y").get(3) == 3.0);
}
