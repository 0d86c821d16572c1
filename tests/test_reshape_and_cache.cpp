// atb.ReshapeAndCacheOmni / atb.ReshapeAndCache: hand-derived runs through the reference,
// and every documented constraint rejected from the command line.
#include <doctest/doctest.h>

#include "case_helpers.hpp"
#include "cases/case_loader.hpp"
#include "cli_runner.hpp"
#include "ops/operator.hpp"

using namespace kvbench;

namespace {

// Which key row (token * heads + head) each cache slot row holds after the reference, or -1.
std::vector<int64_t> slot_sources(const OpCase& op, int64_t slots, int64_t head_size) {
  TensorSet ts = op.make_tensors();
  const Tensor& key = ts.at("key");
  const auto out = op.reference(ts);
  const Expected& cache = out[0];
  REQUIRE(cache.tensor == "key_cache");
  std::vector<int64_t> src(static_cast<size_t>(slots), -1);
  for (int64_t s = 0; s < slots; ++s) {
    if (!cache.is_touched(static_cast<size_t>(s * head_size))) continue;
    for (int64_t r = 0; r < static_cast<int64_t>(key.numel()) / head_size; ++r)
      if (key.get(static_cast<size_t>(r * head_size)) ==
              cache.value().get(static_cast<size_t>(s * head_size)) &&
          key.get(static_cast<size_t>(r * head_size + 1)) ==
              cache.value().get(static_cast<size_t>(s * head_size + 1)))
        src[s] = r;
  }
  return src;
}

}  // namespace

TEST_CASE("Omni, hand-derived: sink + recent of a compressed head, all tokens of a full head") {
  // Two heads, seqLen 5. Head 0: wins 2 from offsetIndex 1 keeps tokens {0, 3, 4} in slots
  // 4, 5, 6 (slot_mapping 4). Head 1: offsetIndex -1 keeps all five tokens in slots 9..13.
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "atb.ReshapeAndCacheOmni", "name": "tiny", "seed": 3,
    "shapes": {"num_head": 2, "head_size": 32, "num_blocks": 2, "block_size": 8},
    "inputs": {"seqLen": [5], "wins": [2, 3], "offsetIndex": [1, -1], "slot_mapping": [4, 9]}})"));
  const auto src = slot_sources(*op, 16, 32);
  // key row of (token t, head h) is t * 2 + h.
  const std::vector<int64_t> expected = {-1, -1, -1, -1, 0, 6, 8, -1, -1, 1, 3, 5, 7, 9, -1, -1};
  CHECK(src == expected);
}

TEST_CASE("ReshapeAndCache, hand-derived: one slot per token, padding tokens skipped") {
  auto op = instantiate(nlohmann::json::parse(R"({
    "op": "atb.ReshapeAndCache", "name": "tiny", "seed": 3,
    "shapes": {"num_tokens": 3, "num_heads": 1, "head_size": 32, "num_blocks": 2, "block_size": 2},
    "inputs": {"slot_mapping": [3, -1, 0]}})"));
  const auto src = slot_sources(*op, 4, 32);
  CHECK(src == std::vector<int64_t>{2, -1, -1, 0});
}

TEST_CASE("Omni: each documented constraint is rejected with exit 2 and its field; the valid case passes") {
  const auto r = run_kvbench("run " + source_path("tests/data/omni"));
  CHECK(r.status == 2);
  CHECK(r.output.find("bad_head_size.json: /shapes/head_size") != std::string::npos);
  CHECK(r.output.find("bad_500_runs.json: /shapes/num_head") != std::string::npos);
  CHECK(r.output.find("bad_seqlen.json: /inputs/seqLen/1") != std::string::npos);
  CHECK(r.output.find("bad_wins.json: /inputs/wins/0") != std::string::npos);
  CHECK(r.output.find("bad_offset.json: /inputs/offsetIndex/2") != std::string::npos);
  CHECK(r.output.find("bad_slot_range.json: /inputs/slot_mapping/3") != std::string::npos);
  CHECK(r.output.find("bad_overlap.json: /inputs/slot_mapping/1") != std::string::npos);
  CHECK(r.output.find("7 invalid cases") != std::string::npos);
  CHECK(r.output.find("PASS  omni_valid") != std::string::npos);
  CHECK(r.output.find("1 passed, 0 failed, 0 skipped") != std::string::npos);
}
