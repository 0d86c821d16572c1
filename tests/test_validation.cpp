// The dispatch limit every kernel plan must keep (maxComputeWorkGroupCount).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "vk/runtime.hpp"

using namespace kvbench;

TEST_CASE("dispatch: a group count over maxComputeWorkGroupCount is an error naming the limit") {
  Runtime rt;
  auto a = rt.buffer(64), b = rt.buffer(64);
  const KernelBuffers buffers{{"source", a.get()}, {"destination", b.get()}};
  const auto& most = rt.info().max_workgroup_count;
  REQUIRE(most[0] > 0);
  CHECK_NOTHROW(rt.dispatch("copy_bandwidth", buffers, {{"count", 0}}, most[0]));
  for (int axis = 0; axis < 3; ++axis) {
    CAPTURE(axis);
    uint32_t g[3] = {1, 1, 1};
    g[axis] = most[axis] + 1;
    try {
      rt.dispatch("copy_bandwidth", buffers, {{"count", 0}}, g[0], g[1], g[2]);
      FAIL("no error");
    } catch (const std::logic_error& e) {
      CHECK(std::string(e.what()).find("exceed maxComputeWorkGroupCount (" + std::to_string(most[0])) != std::string::npos);
    }
  }
}
