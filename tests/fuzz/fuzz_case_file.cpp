// libFuzzer target over case files: bytes -> JSON -> schema check and sweep expansion ->
// operator lookup and instantiation -> the host-side phases of each case (no device).
// Tensors are made and the golden computed only for cases whose tensors total less than
// kMaxTensorBytes, so the fuzzer never asks for a huge allocation itself; whose two largest
// tensors have an element product below kMaxWork (attention's reference does about
// |Q|·|K|/head_dim multiply-adds: a valid 4096-token prefill of 3 MiB takes 76 s under
// ASan); and for at most kMaxGoldensPerInput cases of one input (a sweep repeats the same
// code). Anything thrown but a JSON parse error or a CaseError, and any sanitizer report,
// is a finding.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cases/case_loader.hpp"
#include "core/error.hpp"
#include "ops/operator.hpp"

namespace {

constexpr uint64_t kMaxTensorBytes = 4u << 20;
constexpr uint64_t kMaxWork = uint64_t{1} << 26;
constexpr int kMaxGoldensPerInput = 2;
constexpr uint64_t kHuge = UINT64_MAX;

// Elements of a shape, saturating instead of wrapping.
uint64_t elements(const kvbench::Shape& shape) {
  uint64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return kHuge;
  return n;
}

// Bytes of every tensor together, saturating.
uint64_t total_bytes(const std::vector<kvbench::TensorSpec>& specs) {
  uint64_t total = 0, bits = 0;
  for (const auto& s : specs)
    if (__builtin_mul_overflow(elements(s.shape), static_cast<uint64_t>(kvbench::dtype_bits(s.dtype)),
                               &bits) ||
        __builtin_add_overflow(total, bits / 8 + 1, &total))
      return kHuge;
  return total;
}

// The element product of the two largest tensors, saturating: a bound on quadratic work.
uint64_t work(const std::vector<kvbench::TensorSpec>& specs) {
  uint64_t first = 0, second = 0, product = 0;
  for (const auto& s : specs) {
    const uint64_t n = elements(s.shape);
    if (n > first)
      second = std::exchange(first, n);
    else if (n > second)
      second = n;
  }
  return __builtin_mul_overflow(first, second, &product) ? kHuge : product;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The same path as a case file read from disk: nesting bound, parse, expansion.
  const kvbench::LoadedCases loaded =
      kvbench::load_case_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json", {});
  int goldens = 0;
  for (const auto& def : loaded.cases) {
    const kvbench::Operator* op = kvbench::find_operator(def.op);
    if (!op) continue;
    std::unique_ptr<kvbench::OpCase> c;
    try {
      c = kvbench::instantiate_case(*op, def, {});
    } catch (const kvbench::CaseError&) {
      continue;
    }
    (void)c->describe();
    (void)c->resolved();
    const auto specs = c->tensor_specs();
    if (total_bytes(specs) >= kMaxTensorBytes || work(specs) >= kMaxWork || goldens >= kMaxGoldensPerInput)
      continue;
    ++goldens;
    const kvbench::TensorSet tensors = c->make_tensors();
    (void)c->golden(tensors);
  }
  return 0;
}
