// aclnn.FusedInferAttentionScoreV3: the page-attention faults' reads (fia_faults.hpp).
#include "ops/fused_infer_attention/fia_faults.hpp"

#include <bit>
#include <cmath>
#include <limits>

#include "core/float_format.hpp"
#include "core/hifloat8.hpp"

namespace kvbench {

PagedRead fia_paged_read(const std::string& fault) {
  if (fault == "page_index_stuck") return PagedRead::index_stuck;
  if (fault == "block_offset_capped_128") return PagedRead::offset_capped_128;
  if (fault == "block_size_doubled") return PagedRead::size_doubled;
  return PagedRead::right;
}

FiaSlot fia_key_slot(const FiaParams& p, const std::vector<int64_t>& table, int64_t b, int64_t t,
                     PagedRead read) {
  const PageSlot s = paged_slot(t, p.block_size, read);
  return {table[b * p.max_blocks + s.entry], s.row};
}

namespace {

// HiF8 code `code` decoded as specs/hifloat8.md says, except that the exponent's magnitude
// is the field's low w - 1 bits alone (its implicit leading one 2^(w - 1) dropped).
double hif8_without_implicit_one(uint8_t code) {
  const unsigned p = code & 0x7Fu;
  if (code == 0x80 || p < 8 || p == 0x6F) return hif8_decode(code);  // NaN, zero, denormals, Inf
  const int lead = std::bit_width(p) - 1;                            // 3 .. 6
  const int top = static_cast<int>((p >> 5) & 1u);
  const int w = lead == 6 ? 3 + top : lead - 3, mbits = lead == 6 ? 2 - top : 3;
  const unsigned field = (p >> mbits) & ((1u << w) - 1u);
  const int magnitude = w > 1 ? static_cast<int>(field & ((1u << (w - 1)) - 1u)) : 0;
  const int e = w > 0 && (field >> (w - 1)) != 0 ? -magnitude : magnitude;
  const double v = std::ldexp(1.0 + static_cast<double>(p & ((1u << mbits) - 1u)) / (1 << mbits), e);
  return (code & 0x80) != 0 ? -v : v;
}

}  // namespace

const std::array<double, 256>* fia_hif8_fault_values(const std::string& fault) {
  static const std::array<double, 256> as_e4m3 = fp8_values(Fp8::e4m3fn), no_implicit_one = [] {
    std::array<double, 256> v{};
    for (int c = 0; c < 256; ++c)
      v[static_cast<size_t>(c)] = hif8_without_implicit_one(static_cast<uint8_t>(c));
    return v;
  }();
  if (fault == "hif8_read_as_e4m3") return &as_e4m3;
  if (fault == "hif8_exponent_no_implicit_one") return &no_implicit_one;
  return nullptr;
}

}  // namespace kvbench
