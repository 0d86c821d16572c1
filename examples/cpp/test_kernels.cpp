// The example kernels against every golden case of their operators in $KVBENCH_GOLDEN (a
// folder `kvbench golden` wrote), in doctest. KVBENCH_PLANT=1 plants each kernel's error:
// then every case must fail, its report naming the worst element.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <string>

#include <kvbench/check.hpp>

#include "kernels.hpp"

namespace {

using Kernel = std::function<std::map<std::string, kvbench::Array>(const kvbench::Golden&, example::Options)>;

// How many cases of `op` the folder holds; each is checked.
int check_operator(const std::string& op, const Kernel& kernel) {
  const char* folder = std::getenv("KVBENCH_GOLDEN");
  REQUIRE_MESSAGE(folder, "set KVBENCH_GOLDEN to a folder of goldens (kvbench golden CASES -o DIR)");
  const char* plant = std::getenv("KVBENCH_PLANT");
  const example::Options options{.plant = plant && std::string(plant) == "1"};
  int cases = 0;
  for (const std::string& manifest : kvbench::golden_manifests(folder)) {
    const kvbench::Golden golden = kvbench::Golden::load(manifest);
    if (golden.op() != op) continue;
    ++cases;
    const kvbench::CheckResult r = kvbench::check(golden, kernel(golden, options));
    INFO(golden.name());
    CHECK_MESSAGE(r.passed(), r.report);
  }
  return cases;
}

}  // namespace

TEST_CASE("kvbench.DequantizeGroup") {
  CHECK(check_operator("kvbench.DequantizeGroup", example::dequantize_group) > 0);
}

TEST_CASE("pmx.KeyValueCache") { CHECK(check_operator("pmx.KeyValueCache", example::key_value_cache) > 0); }
