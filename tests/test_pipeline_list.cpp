// `kvbench list --pipelines` and the pipeline warmer plan a case on the device without
// computing it: nothing uploaded, and a case that meets an error is reported by name while
// the others are still listed.
#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>

#include "copy_stub.hpp"
#include "runner/pipeline_list.hpp"
#include "vk/runtime.hpp"

using namespace kvbench;

namespace {

// Uploads x and copies it with one dispatch; with `fails`, throws before dispatching.
class PlannedCopy final : public CopyStub {
 public:
  PlannedCopy(const std::string& name, bool fails) : CopyStub(name), fails_(fails) {}
  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    if (fails_) throw std::runtime_error("no plan for this case");
    Batch batch(rt);
    Buffer* source = batch.buffer(64);
    Buffer* destination = batch.buffer(64);
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
  CHECK(rt.uploaded_bytes() == 16);
  CHECK(io.at("y").get(3) == 4.5);
}
