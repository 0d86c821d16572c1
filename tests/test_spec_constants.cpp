// Specialization constants by name, as buffers and Params members are bound: the runtime
// reads each constant's constant_id from the SPIR-V, and refuses a name the shader does not
// declare or a constant it declares that a kernel leaves unset.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "vk/runtime.hpp"
#include "vk/spirv_reflect.hpp"

using namespace kvbench;

namespace {

// The message of the std::logic_error `f` throws ("" when it throws none).
template <typename F>
std::string logic_error_of(F f) {
  try {
    f();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("reflect_shader: specialization constants by name, the ones the code reads only") {
  const ShaderInterface lanes = reflect_shader(embedded_shaders().at("fia_attention"));
  CHECK(lanes.spec_constants == std::map<std::string, uint32_t>{{"D", 0},
                                                                {"FIA_DV", 1},
                                                                {"KV_PATH", 2},
                                                                {"DQK", 3},
                                                                {"K_PER_CHANNEL", 4},
                                                                {"V_PER_CHANNEL", 5},
                                                                {"HAS_OFFSET", 6},
                                                                {"CODES_UVEC4", 7},
                                                                {"TEXELS", 8},
                                                                {"SCORE_LOADS", 9},
                                                                {"LANES", 15}});
  // The tiles body never reads LANES: glslang leaves it out, and no kernel has to give it.
  CHECK(!reflect_shader(embedded_shaders().at("fia_attention_tiles")).spec_constants.count("LANES"));
  CHECK(reflect_shader(embedded_shaders().at("copy_bandwidth")).spec_constants.empty());
}

TEST_CASE("pipeline keys: constants by name, in constant_id order; an unknown or unset one is an error") {
  Runtime rt;
  CHECK(rt.pipeline_key(Kernel("sdpa_attention", {{"LANES", 4}, {"D", 64}})) == "sdpa_attention:64:15=4");
  CHECK(rt.pipeline_key(Kernel("attention_merge", {{"PER_WORD", 2}, {"TEXELS", 1}})) ==
        "attention_merge:1:2");
  CHECK(rt.pipeline_key(Kernel("copy_bandwidth")) == "copy_bandwidth");
  CHECK(logic_error_of([&] {
          rt.pipeline_key(Kernel("sdpa_attention_tiles", {{"D", 64}, {"LANES", 4}}));
        }) == "sdpa_attention_tiles has no specialization constant LANES (it has: D)");
  CHECK(logic_error_of([&] {
          rt.pipeline_key(Kernel("attention_merge", {{"TEXELS", 1}}));
        }) == "attention_merge: specialization constant PER_WORD (constant_id 1) is not given");
  CHECK(logic_error_of([&] { rt.pipeline_key(Kernel("no_such_shader")); }) ==
        "no embedded shader named no_such_shader");
}

TEST_CASE("specialization constants by name: a workgroup size set by one is \"local_size_x\"") {
  CHECK(reflect_shader(embedded_shaders().at("spec_selftest")).spec_constants ==
        std::map<std::string, uint32_t>{{"SCALE", 0}, {"local_size_x", 3}});
  Runtime rt;
  auto out = rt.buffer(8 * 4);
  out->upload(std::vector<uint8_t>(8 * 4, 0));
  rt.dispatch(Kernel("spec_selftest", {{"SCALE", 3}, {"local_size_x", 4}}), {{"out", out.get()}}, {}, 1);
  std::vector<uint32_t> got(8);
  out->download(std::span(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
  CHECK(got == std::vector<uint32_t>{0, 3, 6, 9, 0, 0, 0, 0});  // 4 invocations, each 3 x its index
}
