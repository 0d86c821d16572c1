// aclnn.FusedInferAttentionScoreV3: a case file's attributes checked against the operator's
// constraints (spec "Constraints") and, when asked, the Atlas A2 limits ("ascend_limits").
#include <algorithm>
#include <cmath>
#include <string>

#include "core/float_format.hpp"
#include "ops/fused_infer_attention/fia_params.hpp"

namespace kvbench {
namespace {

struct LayoutInfo {
  const char* name;
  FiaOrder in, out;
  bool bsh, tnd;
};
constexpr LayoutInfo kLayouts[] = {
    {"BSH", FiaOrder::BSND, FiaOrder::BSND, true, false},
    {"BSND", FiaOrder::BSND, FiaOrder::BSND, false, false},
    {"BNSD", FiaOrder::BNSD, FiaOrder::BNSD, false, false},
    {"BNSD_BSND", FiaOrder::BNSD, FiaOrder::BSND, false, false},
    {"BSH_NBSD", FiaOrder::BSND, FiaOrder::NBSD, true, false},
    {"BSND_NBSD", FiaOrder::BSND, FiaOrder::NBSD, false, false},
    {"BNSD_NBSD", FiaOrder::BNSD, FiaOrder::NBSD, false, false},
    {"TND", FiaOrder::TND, FiaOrder::TND, false, true},
    {"NTD_TND", FiaOrder::NTD, FiaOrder::TND, false, true},
    {"TND_NTD", FiaOrder::TND, FiaOrder::NTD, false, true},
};

bool one_of(const std::string& s, std::initializer_list<const char*> list) {
  for (const char* x : list)
    if (s == x) return true;
  return false;
}

// Batch b's entry of a per-batch array: length 1 is broadcast, longer gives its first B.
int64_t per_batch(const std::vector<int64_t>& a, int64_t b) { return a.size() == 1 ? a[0] : a[static_cast<size_t>(b)]; }

// The memory the case needs at least, from its numbers alone, before any list of B entries
// exists (a 200-byte file with B = 2^27 must not take 6 GiB to be rejected): the query and
// the output (2 copies each, the output's golden 25 bytes an element), unpaged K/V at a byte
// an element, and the per-batch lengths, starts and bands (48 bytes a batch). The exact
// check of every tensor follows once the case is built (instantiate_case).
void check_memory_before_lists(Args& c, const FiaParams& p) {
  const char* batch = p.tnd ? "actualSeqLengths" : "B";
  const char* rows = p.tnd ? "actualSeqLengths" : "S1";
  const Args::Size B{batch, p.B}, S1{rows, p.S1}, N{"numHeads", p.N}, D{"D", p.D}, Dv{"Dv", p.Dv};
  const uint64_t q_bytes = dtype_bits(p.q) / 8;
  std::vector<Args::MemoryTerm> terms{{{B, S1, N, D}, 2 * q_bytes}, {{B, S1, N, Dv}, 2 + 25}, {{B}, 48}};
  if (!p.paged() && !p.tnd) {
    const Args::Size S2{"S2", p.S2}, Nkv{"numKeyValueHeads", p.Nkv};
    terms.push_back({{B, S2, Nkv, D}, 1});
    terms.push_back({{B, S2, Nkv, Dv}, 1});
  }
  c.require_memory(terms, "the query, output, K/V and per-batch lengths of " + std::to_string(p.B) + " batches");
}

void parse_lengths(Args& c, FiaParams& p) {
  if (c.written("actualSeqLengths")) p.act_q = c.integers("actualSeqLengths");
  if (c.written("actualSeqLengthsKv")) p.act_kv = c.integers("actualSeqLengthsKv");
  if (p.tnd) {
    for (const char* k : {"B", "S1", "S2"})
      if (c.written(k)) c.fail(k, std::string(k) + " comes from the actual lengths with inputLayout " + p.layout + "; do not write it");
    if (p.act_q.empty()) c.fail("actualSeqLengths", "inputLayout " + p.layout + " needs actualSeqLengths (cumulative ends)");
    if (p.act_kv.empty()) c.fail("actualSeqLengthsKv", "inputLayout " + p.layout + " needs actualSeqLengthsKv");
    p.B = static_cast<int64_t>(p.act_q.size());
    if (p.act_kv.size() != p.act_q.size())
      c.fail("actualSeqLengthsKv", "with inputLayout " + p.layout + " actualSeqLengthsKv has one entry per batch, as actualSeqLengths (" +
                                       std::to_string(p.B) + ")");
    p.S1 = p.act_q.back();
    check_memory_before_lists(c, p);
    const bool kv_cumulative = !p.paged();  // page attention: per-batch kv lengths
    int64_t prev_q = 0, prev_kv = 0;
    for (int64_t b = 0; b < p.B; ++b) {
      const int64_t q = p.act_q[b], kv = p.act_kv[b];
      if (q < prev_q) c.fail_at("actualSeqLengths", static_cast<size_t>(b), "cumulative ends must not decrease");
      if (kv_cumulative && kv < prev_kv) c.fail_at("actualSeqLengthsKv", static_cast<size_t>(b), "cumulative ends must not decrease");
      p.s1b.push_back(q - prev_q);
      p.q_start.push_back(prev_q);
      p.s2b.push_back(kv_cumulative ? kv - prev_kv : kv);
      p.kv_start.push_back(kv_cumulative ? prev_kv : 0);
      prev_q = q;
      if (kv_cumulative) prev_kv = kv;
    }
    p.S1 = p.act_q.back();
    p.S2 = kv_cumulative ? p.act_kv.back() : *std::max_element(p.act_kv.begin(), p.act_kv.end());
    if (p.S1 == 0) c.fail("actualSeqLengths", "the query has no token (T = 0)");
    c.resolve("B", p.B);
    c.resolve("S1", p.S1);
    c.resolve("S2", p.S2);
    return;
  }
  for (const char* k : {"B", "S1", "S2"})
    if (!c.written(k)) c.fail(k, std::string(k) + " is required with inputLayout " + p.layout);
  p.B = c.integer("B");
  p.S1 = c.integer("S1");
  p.S2 = c.integer("S2");
  check_memory_before_lists(c, p);
  auto check = [&](const char* key, const std::vector<int64_t>& a, int64_t limit, const char* what) {
    if (!c.written(key)) return;
    if (a.size() != 1 && static_cast<int64_t>(a.size()) < p.B)
      c.fail(key, std::string(key) + " needs 1 entry (broadcast) or at least B = " + std::to_string(p.B));
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] > limit) c.fail_at(key, i, std::string("a length above ") + what + " = " + std::to_string(limit));
  };
  check("actualSeqLengths", p.act_q, p.S1, "S1");
  check("actualSeqLengthsKv", p.act_kv, p.S2, "S2");
  for (int64_t b = 0; b < p.B; ++b) {
    p.s1b.push_back(p.ifa() || p.act_q.empty() ? p.S1 : per_batch(p.act_q, b));
    p.s2b.push_back(p.act_kv.empty() ? p.S2 : per_batch(p.act_kv, b));
    p.q_start.push_back(0);
    p.kv_start.push_back(0);
  }
}

// Left padding: batch b's rows and keys end `pad` before the end (spec "Left padding").
void parse_left_padding(Args& c, FiaParams& p) {
  if (c.written("queryPaddingSize")) p.q_pad = std::max<int64_t>(0, c.integer("queryPaddingSize"));
  if (c.written("kvPaddingSize")) p.kv_pad = std::max<int64_t>(0, c.integer("kvPaddingSize"));
  if (!p.left_padded()) return;
  const char* key = p.q_pad >= 0 ? "queryPaddingSize" : "kvPaddingSize";
  if (p.tnd) c.fail(key, "left padding takes no TND layout");
  if (p.paged()) c.fail(key, "left padding takes no page attention (the document)");
  if (p.sparse >= 2) c.fail("sparseMode", "left padding with sparseMode 2-4 has no documented alignment origin; use 0 or 1");
  if (p.q_pad >= 0) {
    if (p.ifa()) c.fail("queryPaddingSize", "queryPaddingSize needs Q_S > 1");
    if (p.act_q.empty()) c.fail("queryPaddingSize", "queryPaddingSize needs actualSeqLengths (the document)");
  }
  if (p.kv_pad >= 0 && p.act_kv.empty()) c.fail("kvPaddingSize", "kvPaddingSize needs actualSeqLengthsKv (the document)");
  for (int64_t b = 0; b < p.B; ++b) {
    if (p.q_pad >= 0) {
      p.q_start[b] = p.S1 - p.q_pad - p.s1b[b];
      if (p.q_start[b] < 0)
        c.fail("queryPaddingSize", "batch " + std::to_string(b) + " starts before row 0 (S1 - queryPaddingSize - actualSeqLengths < 0)");
    }
    if (p.kv_pad >= 0) {
      p.kv_start[b] = p.S2 - p.kv_pad - p.s2b[b];
      if (p.kv_start[b] < 0 && !p.ifa())
        c.fail("kvPaddingSize", "batch " + std::to_string(b) + " starts before key 0 (S2 - kvPaddingSize - actualSeqLengthsKv < 0)");
      if (p.kv_start[b] < 0) p.kv_start[b] = 0, p.s2b[b] = 0;  // Q_S = 1: the batch's output is 0 (documented)
    }
  }
}

// Shared prefix: every batch attends to prefix[:Lp] and then its own keys.
void parse_prefix(Args& c, FiaParams& p) {
  p.S_prefix = c.integer("S_prefix");
  if (!p.has_prefix()) {
    if (c.written("actualSharedPrefixLen")) c.fail("actualSharedPrefixLen", "actualSharedPrefixLen needs a shared prefix (S_prefix > 0)");
    return;
  }
  p.prefix_len = c.written("actualSharedPrefixLen") ? c.integer("actualSharedPrefixLen") : p.S_prefix;
  if (p.prefix_len > p.S_prefix) c.fail("actualSharedPrefixLen", "actualSharedPrefixLen must not exceed the prefix's S (S_prefix)");
  if (p.paged()) c.fail("S_prefix", "a shared prefix takes no page attention (the document)");
  if (p.left_padded()) c.fail("S_prefix", "a shared prefix takes no left padding (the document)");
  if (p.tnd) c.fail("S_prefix", "a shared prefix takes no TND layout");
}

// MLA: the rope channels join the contraction; the document excludes the rest.
void parse_rope(Args& c, FiaParams& p) {
  p.rope = c.integer("rope");
  if (!p.rope) return;
  const std::string why = " (the document: MLA takes no left padding, pse, prefix, antiquant or post-quant)";
  if (p.left_padded()) c.fail("rope", "MLA with left padding is rejected" + why);
  if (p.pse != "none") c.fail("rope", "MLA with pseShift is rejected" + why);
  if (p.has_prefix()) c.fail("rope", "MLA with a shared prefix is rejected" + why);
  if (p.quant.on) c.fail("rope", "MLA with KV antiquant is rejected" + why);
  if (p.post.on) c.fail("rope", "MLA with an int8 output is rejected" + why);
}

void parse_mask_and_pse(Args& c, FiaParams& p) {
  p.mask = c.string("attenMask_shape");
  p.mask_pad = c.integer("attenMask_pad");
  p.pse = c.string("pseShift_shape");
  p.pse_pad = c.integer("pseShift_pad");
  p.masked_rows = c.integer("masked_rows");
  if (p.has_mask()) p.mask_dtype = c.dtype("attenMask", DType::boolean);
  const std::string mode = "sparseMode " + std::to_string(p.sparse);
  if (p.ifa()) {
    if (p.has_mask() && !one_of(p.mask, {"B,S2", "B,1,S2", "B,1,1,S2"}))
      c.fail("attenMask_shape", "with S1 = 1 the mask is (B, S2), (B, 1, S2) or (B, 1, 1, S2)");
  } else if (p.sparse >= 2) {
    if (!p.compressed_mask())
      c.fail("attenMask_shape", mode + " takes the compressed mask: 2048,2048, 1,2048,2048 or 1,1,2048,2048");
  } else {
    if (p.sparse == 1 && !p.has_mask()) c.fail("attenMask_shape", "sparseMode 1 (allMask) needs attenMask");
    if (p.has_mask() && !one_of(p.mask, {"S1,S2", "1,S1,S2", "B,1,S1,S2", "1,1,S1,S2"}))
      c.fail("attenMask_shape", mode + " takes a full mask: S1,S2, 1,S1,S2, B,1,S1,S2 or 1,1,S1,S2");
    if (p.tnd && p.has_mask())
      c.fail("attenMask_shape", "inputLayout " + p.layout + " takes no mask in sparseMode 0/1 (the document: sparse 0 without mask, or 3/4 with mask)");
  }
  if (p.compressed_mask() && p.mask_pad) c.fail("attenMask_pad", "the compressed mask is exactly 2048 x 2048");
  if (!p.has_mask() && p.mask_pad) c.fail("attenMask_pad", "attenMask_pad needs attenMask");
  if (p.pse != "none" && p.tnd) c.fail("pseShift_shape", "inputLayout " + p.layout + " takes no pseShift");
  if (p.pse == "none" && p.pse_pad) c.fail("pseShift_pad", "pseShift_pad needs pseShift");
  if (p.masked_rows) {
    if (!p.mask_applies() || p.ifa()) c.fail("masked_rows", "fully masked rows need a full attenMask (sparseMode 0 or 1, S1 > 1)");
    if (p.inner_precise < 2)
      c.fail("masked_rows", "a row whose every key is masked is undocumented without the row-invalid correction: set innerPrecise 2 or 3");
    if (p.masked_rows > *std::min_element(p.s1b.begin(), p.s1b.end()))
      c.fail("masked_rows", "masked_rows exceeds a batch's query length");
  }
}

// preTokens/nextTokens as the PFA tiling checks them (only where they apply).
void check_band(Args& c, const FiaParams& p) {
  const bool band = !p.ifa() && ((p.sparse == 0 && p.has_mask() && !p.left_padded()) || p.sparse == 4);
  if (!band) return;
  if (p.pre + p.next < 0) c.fail("nextTokens", "preTokens + nextTokens must be >= 0");
  if (p.pre < 0 && p.next < 0) c.fail("nextTokens", "preTokens and nextTokens must not both be negative");
  // TND sparse 4's bounds are inclusive in the document (preTokens >= -actualSeqLengths,
  // nextTokens >= -actualSeqLengthsKv): at the bound the band is empty, rows see no key.
  const bool inclusive = p.tnd && p.sparse == 4;
  const std::string bound = inclusive ? "at least -" : "above -";
  for (int64_t b = 0; b < p.B; ++b) {
    const int64_t rows = p.sparse == 0 ? p.s1b[b] : p.keys(b), cols = p.sparse == 0 ? p.keys(b) : p.s1b[b];
    if (rows == 0 || cols == 0) continue;
    if (p.next < 0 && -p.next >= rows + inclusive)
      c.fail("nextTokens", "a negative nextTokens must be " + bound + (p.sparse == 0 ? "S1b" : "S2b") + " = " +
                               std::to_string(-rows) + " (batch " + std::to_string(b) + ")");
    if (p.pre < 0 && -p.pre >= cols + inclusive)
      c.fail("preTokens", "a negative preTokens must be " + bound + (p.sparse == 0 ? "S2b" : "S1b") + " = " +
                              std::to_string(-cols) + " (batch " + std::to_string(b) + ")");
  }
}

// KV antiquant: the modes the document defines, and the combinations it allows.
void parse_antiquant(Args& c, FiaParams& p) {
  FiaAntiquant& a = p.quant;
  const DType kv = c.dtype("key", p.q, {p.q, DType::i8, DType::s4});
  c.require_same_dtype("value", kv, "key");
  a.key_mode = static_cast<int>(c.integer("keyAntiquantMode"));
  if (!c.written("valueAntiquantMode")) c.resolve("valueAntiquantMode", a.key_mode);
  a.value_mode = static_cast<int>(c.integer("valueAntiquantMode"));
  a.per_tensor = c.boolean("antiquant_per_tensor");
  a.combined = c.boolean("antiquant_combined");
  a.offset = c.boolean("antiquant_offset");
  a.on = kv == DType::i8 || kv == DType::s4;
  a.codes = kv;
  if (!a.on) {
    for (const char* k : {"keyAntiquantMode", "valueAntiquantMode", "antiquant_per_tensor", "antiquant_offset", "antiquantMode",
                          "antiquant_combined"})
      if (c.written(k)) c.fail(k, std::string(k) + " needs int8/int4 key and value (dtypes key, value: i8 or s4)");
    return;
  }
  if (p.tnd) c.fail("inputLayout", "KV antiquant with TND layouts is not built");
  if (a.combined) {  // the legacy parameters: one mode for both
    for (const char* k : {"keyAntiquantMode", "valueAntiquantMode"})
      if (c.written(k)) c.fail(k, std::string(k) + " belongs to the separate parameters; the combined ones take antiquantMode");
    a.key_mode = a.value_mode = static_cast<int>(c.integer("antiquantMode"));
    if (kv != DType::i8) c.fail("antiquant_combined", "the combined antiquant parameters take int8 KV only (the document)");
    if (p.q != DType::f16) c.fail("antiquant_combined", "the combined antiquant parameters take an f16 query only (the document)");
    if (a.key_mode == 0 && !a.per_tensor && p.D != p.Dv) c.fail("Dv", "combined per-channel scales need Dv = D");
  } else if (c.written("antiquantMode")) {
    c.fail("antiquantMode", "antiquantMode belongs to the combined parameters (antiquant_combined)");
  }
  if (p.has_prefix()) c.fail("S_prefix", "KV antiquant with a shared prefix is not built (per-token scales over the prefix are undocumented)");
  if (a.value_mode != a.key_mode && !(a.key_mode == 0 && a.value_mode == 1))
    c.fail("valueAntiquantMode", "valueAntiquantMode equals keyAntiquantMode, except key 0 (per-channel) with value 1 (per-token)");
  if (!p.ifa() && a.key_mode > 1) c.fail("keyAntiquantMode", "with Q_S > 1 only modes 0 and 1 (the document)");
  if (a.key_mode >= 4 && !p.paged()) c.fail("keyAntiquantMode", "modes 4 and 5 keep their scales in page-attention blocks: set blockSize");
  if (a.per_tensor && a.key_mode != 0) c.fail("antiquant_per_tensor", "per-tensor is mode 0 with a [1] scale");
  if (kv == DType::s4) {
    const bool int4_mode = a.key_mode == 0 || a.key_mode == 1 || a.key_mode == 3;
    if (!int4_mode) c.fail("keyAntiquantMode", "int4 KV takes modes 0 (per-channel), 1, 3 and the key 0 / value 1 pair");
    if (a.per_tensor) c.fail("antiquant_per_tensor", "int4 KV has no per-tensor mode");
    if (p.paged()) c.fail("blockSize", "int4 KV has no page attention (the document)");
    if (p.D % 8 != 0 || p.Dv % 8 != 0)
      c.fail(p.D % 8 != 0 ? "D" : "Dv", "int4 KV packs 8 values per int32: D and Dv are multiples of 8");
  }
}

// Post-quant int8 output, and the combinations the document intercepts (spec).
void parse_post_quant(Args& c, FiaParams& p) {
  FiaPostQuant& q = p.post;
  q.on = c.dtype("attentionOut", p.q, {p.q, DType::i8}) == DType::i8;
  q.per_channel = c.boolean("postquant_per_channel");
  q.offset = c.boolean("postquant_offset");
  q.ties = c.boolean("postquant_ties");
  if (!q.on) {
    for (const char* k : {"postquant_per_channel", "postquant_offset", "postquant_ties"})
      if (c.written(k)) c.fail(k, std::string(k) + " needs an int8 output (dtypes: attentionOut i8)");
    return;
  }
  q.dtype = c.dtype("quantScale2", DType::f32, p.q == DType::bf16 ? std::initializer_list<DType>{DType::f32, DType::bf16}
                                                                   : std::initializer_list<DType>{DType::f32});
  if (p.quant.codes == DType::s4) c.fail("attentionOut", "int4 KV takes no post-quant (the document)");
  if (q.ties && p.quant.on) c.fail("postquant_ties", "postquant_ties writes the value tensor: it takes no KV antiquant");
  if (q.offset && p.masked_rows) c.fail("postquant_offset", "quantOffset2 with fully masked rows is intercepted by the document");
  if (p.sparse == 4 && (p.pre < 0 || p.next < 0))
    c.fail("attentionOut", "an int8 output takes no band (sparseMode 4) with a negative preTokens/nextTokens (the document)");
  if (q.per_channel && p.left_padded()) c.fail("postquant_per_channel", "per-channel post-quant takes no left padding (the document)");
  if (q.per_channel && p.lse) c.fail("postquant_per_channel", "per-channel post-quant takes no softmaxLse (the document: Ring Attention)");
  if (q.offset)  // rows the operator does not compute would get the offset: intercepted
    for (int64_t b = 0; b < p.B; ++b) {
      const int64_t s1 = p.s1b[b], s2 = p.keys(b);
      const bool gaps = p.ifa() ? false
                        : p.sparse == 0 && p.has_mask() ? s1 - s2 - p.pre > 0 || p.next < 0
                        : p.sparse == 3                 ? s2 - s1 < 0
                        : p.sparse == 4                 ? p.pre < 0 || p.next + s2 - s1 < 0
                                                        : false;
      if (gaps || (s1 > 0 && s2 == 0))
        c.fail("postquant_offset", "quantOffset2 with rows the operator does not compute (batch " + std::to_string(b) +
                                       ") is intercepted by the document");
    }
}

// The document's alignments of D and blockSize by dtype (Atlas A2).
void check_ascend_alignment(Args& c, const FiaParams& p) {
  auto need = [&](bool ok, const char* key, const std::string& why) {
    if (!ok) c.fail(key, "ascend_limits: " + why);
  };
  const bool int8 = p.quant.codes == DType::i8 && p.quant.on, int4 = p.quant.codes == DType::s4 && p.quant.on;
  const auto misaligned = [&](int64_t m) { return p.D % m != 0 ? "D" : "Dv"; };  // the head size at fault
  if (p.ifa()) {
    if (p.paged() && int8) need(p.block_size % 32 == 0, "blockSize", "with Q_S = 1, page attention with int8 K/V needs blockSize a multiple of 32");
    if (int4) need(p.D % 64 == 0 && p.Dv % 64 == 0, misaligned(64), "with Q_S = 1, int4 K/V needs D and Dv multiples of 64");
  } else {
    if (int8 || p.post.on)
      need(p.D % 32 == 0 && p.Dv % 32 == 0, misaligned(32), "with Q_S > 1 and int8 in the inputs or output, D and Dv are multiples of 32");
    if (int4) need(p.D % 64 == 0 && p.Dv % 64 == 0, misaligned(64), "with Q_S > 1 and int4 K/V, D and Dv are multiples of 64");
  }
  if (p.post.on && p.post.per_channel) {
    need(p.Dv % 32 == 0, c.written("Dv") ? "Dv" : "D", "per-channel post-quant needs the int8 output rows 32-byte aligned (Dv a multiple of 32)");
    need(!p.left_padded(), "postquant_per_channel", "per-channel post-quant takes no left padding");
  }
}

// The document's rules for KV antiquant on the device (Atlas A2): the separate parameters
// (keyAntiquantScale, ...) at Q_S > 1, and the key per-channel / value per-token pair.
void check_ascend_antiquant(Args& c, const FiaParams& p) {
  auto need = [&](bool ok, const char* key, const std::string& why) {
    if (!ok) c.fail(key, "ascend_limits: " + why);
  };
  const FiaAntiquant& a = p.quant;
  if (!a.combined && !p.ifa()) {
    const std::string rule = "separate K/V antiquant parameters with Q_S > 1 ";
    need(p.S1 <= 16, "S1", rule + "need Q_S <= 16");
    need(p.q == DType::bf16, "query", rule + "need a bf16 query");
    need(!p.post.on, "attentionOut", rule + "need a bf16 output (no int8 post-quant)");
    need(a.codes == DType::i8, "key", rule + "need int8 K/V");
    need(a.key_mode == a.value_mode, "valueAntiquantMode", rule + "need equal key and value modes");
    need(!a.per_tensor, "antiquant_per_tensor", rule + "are per-channel or per-token only");
    need(p.q_pad < 0 && p.kv_pad < 0, p.q_pad >= 0 ? "queryPaddingSize" : "kvPaddingSize", rule + "take no left padding");
    need(!p.paged(), "blockSize", rule + "take no page attention");
  }
  if (p.ifa() && a.key_mode == 0 && a.value_mode == 1 && a.codes == DType::i8) {
    need(p.q == DType::f16, "query", "the key per-channel / value per-token pair with int8 K/V takes an f16 query");
    need(!p.post.on, "attentionOut", "the key per-channel / value per-token pair with int8 K/V takes an f16 output");
  }
}

void check_ascend_limits(Args& c, const FiaParams& p) {
  auto need = [&](bool ok, const char* key, const std::string& why) {
    if (!ok) c.fail(key, "ascend_limits: " + why);
  };
  need(p.q != DType::f32, "ascend_limits", "the device takes f16 or bf16 query/key/value, not f32");
  need(p.B <= 65536, "B", "B <= 65536");
  need(p.N <= 256, "numHeads", "N <= 256");
  need(p.D <= 512, "D", "D <= 512");
  need(p.Dv == p.D || p.tnd, "Dv", "a value head size other than D only with TND/NTD_TND");
  need(p.D % 16 == 0 || p.B <= 128 || p.ifa(), "D", "D not a multiple of 16 limits B to 128");
  if (p.paged()) {
    if (p.ifa()) need(p.block_size % 16 == 0 && p.block_size <= 512, "blockSize", "with Q_S = 1, blockSize is a multiple of 16, at most 512");
    else need(p.block_size % 128 == 0 && p.block_size <= 512, "blockSize", "with Q_S > 1, blockSize is 128, 256, 384 or 512");
    need(p.bnnbsd || p.Nkv * p.D <= 65535, "kv_cache_layout", "BnBsH needs numKeyValueHeads * D <= 65535 (use BnNBsD)");
  }
  if (p.ifa()) need(p.inner_precise <= 1, "innerPrecise", "with Q_S = 1 only innerPrecise 0 or 1");
  check_ascend_alignment(c, p);
  if (p.quant.on) check_ascend_antiquant(c, p);
  if (p.rope) {
    need(p.D == 512 || p.D == 128, "D", "MLA takes D 512 or 128");
    if (p.D == 512) {
      need(p.paged() && (p.block_size == 16 || p.block_size == 128), "blockSize", "MLA with D 512 needs page attention, blockSize 16 or 128");
      need(p.Nkv == 1, "numKeyValueHeads", "MLA with D 512 takes one kv head");
      need(p.tnd || p.S1 <= 16, "S1", "MLA with D 512 takes 1-16 query tokens");
      need(p.N <= 128 && (p.N & (p.N - 1)) == 0, "numHeads", "MLA with D 512 takes numHeads 1, 2, 4, 8, 16, 32, 64 or 128");
      if (p.tnd) {
        need(p.N >= 32, "numHeads", "MLA with D 512 in TND layouts takes numHeads 32, 64 or 128");
        need(p.layout != "NTD_TND", "inputLayout", "MLA with D 512 takes TND or TND_NTD, not NTD_TND");
      } else if (p.S1 == 1) {
        need(p.sparse == 0 && !p.has_mask(), "sparseMode", "MLA with D 512 and Q_S = 1 takes only sparse 0 without a mask");
      } else {
        need(p.sparse == 3 && p.has_mask(), "sparseMode", "MLA with D 512 and Q_S > 1 takes only sparse 3 with a mask");
      }
    } else {
      need(p.tnd && !p.paged(), "inputLayout", "MLA with D 128 takes TND or NTD_TND without page attention");
    }
  }
  if (!p.tnd) return;
  const bool ntd = p.layout == "NTD_TND";
  need(p.B <= 4096, "actualSeqLengths", "at most 4096 batches with TND layouts");
  if (ntd) {
    need((p.D == 128 || p.D == 192) && p.Dv == 128, "D", "NTD_TND takes D 128 or 192 and Dv 128");
    need(p.q == DType::bf16, "query", "NTD_TND takes bf16");
    need(!p.paged(), "blockSize", "NTD_TND has no page attention");
  } else {
    need((p.D == p.Dv && p.D <= 256) || (p.D == 192 && (p.Dv == 128 || p.Dv == 192)), "Dv",
         "TND takes D = Dv <= 256, or D 192 with Dv 128 or 192");
  }
  need((p.sparse == 0 && !p.has_mask()) || p.sparse == 3 || p.sparse == 4, "sparseMode",
       "TND layouts take sparse 0 without mask, or 3/4 with the compressed mask");
  if (p.N == p.Nkv && p.q == DType::f16) {
    need(p.sparse == 0, "sparseMode", "TND MHA in f16 takes only sparse 0 without mask");
    need(p.inner_precise == 1, "innerPrecise", "TND MHA in f16 takes only innerPrecise 1");
    need(!p.paged(), "blockSize", "TND MHA in f16 has no page attention");
  }
  if (p.N != p.Nkv) {
    need(p.q != DType::f16 || p.sparse != 4, "sparseMode", "TND GQA in f16 takes only sparse 0 without mask, or 3");
    need(p.inner_precise == 0, "innerPrecise", "TND GQA takes only innerPrecise 0");
    need(!p.paged() || (!p.bnnbsd && p.block_size == 128), "blockSize", "TND GQA page attention is BnBsH with blockSize 128");
  }
  if (p.sparse == 3)
    for (int64_t b = 0; b < p.B; ++b)
      need(p.s1b[b] < p.s2b[b], "actualSeqLengths", "TND sparse 3 needs each batch's query length below its kv length");
}

}  // namespace

FiaParams parse_fia_params(Args& c) {
  FiaParams p;
  p.N = c.integer("numHeads");
  const int64_t nkv = c.integer("numKeyValueHeads");
  p.Nkv = nkv ? nkv : p.N;
  if (p.N % p.Nkv != 0) c.fail("numKeyValueHeads", "numKeyValueHeads must divide numHeads");
  if (p.N / p.Nkv > 64) c.fail("numKeyValueHeads", "numHeads / numKeyValueHeads must be at most 64");
  p.layout = c.string("inputLayout");
  for (const auto& l : kLayouts)
    if (p.layout == l.name) {
      p.in = l.in;
      p.out = l.out;
      p.bsh = l.bsh;
      p.tnd = l.tnd;
    }
  p.sparse = static_cast<int>(c.integer("sparseMode"));
  if (p.sparse > 4) c.fail("sparseMode", "sparseMode 5-8 (prefix, global, dilated, block_local) are unsupported by the operator");
  p.inner_precise = static_cast<int>(c.integer("innerPrecise"));
  p.pre = c.integer("preTokens");
  p.next = c.integer("nextTokens");
  p.q = c.dtype("query", DType::f16);
  p.D = c.integer("D");
  if (!c.written("Dv")) c.resolve("Dv", p.D);
  p.Dv = c.integer("Dv");
  p.lse = c.boolean("softmaxLseFlag");
  p.block_size = c.integer("blockSize");
  p.bnnbsd = c.string("kv_cache_layout") == "BnNBsD";
  if (!p.paged() && c.written("kv_cache_layout")) c.fail("kv_cache_layout", "kv_cache_layout needs page attention (blockSize > 0)");
  parse_lengths(c, p);
  if (p.paged()) {
    if (p.act_kv.empty()) c.fail("blockSize", "page attention needs actualSeqLengthsKv");
    if (p.bnnbsd && p.in != FiaOrder::BNSD && p.in != FiaOrder::TND)
      c.fail("kv_cache_layout", "the BnNBsD cache takes BNSD or TND queries (the document)");
    p.max_blocks = std::max<int64_t>(1, (p.S2 + p.block_size - 1) / p.block_size);
    p.num_blocks = 1;  // the spare, NaN-poisoned block
    for (int64_t s : p.s2b) p.num_blocks += (s + p.block_size - 1) / p.block_size;
    c.require_memory("blockSize", {p.B, p.max_blocks}, 4, "the block table");
  }
  parse_left_padding(c, p);
  parse_prefix(c, p);
  parse_mask_and_pse(c, p);
  parse_antiquant(c, p);
  parse_post_quant(c, p);
  parse_rope(c, p);
  if (p.left_padded() && p.quant.codes == DType::s4) c.fail("kvPaddingSize", "left padding takes no int4 KV (the document)");
  check_band(c, p);
  p.scale = round_f32(c.number("scaleValue"));
  if (!std::isfinite(p.scale)) c.fail("scaleValue", "scaleValue must be finite in f32");
  for (int64_t b = 0; b < p.B; ++b)
    // Sparse 0 with left padding ignores preTokens/nextTokens (the document).
    p.band.push_back(fia_band(p.sparse, p.pre, p.next, p.has_mask() && !p.left_padded(), p.ifa(), p.s1b[b], p.keys(b)));
  if (c.boolean("ascend_limits")) check_ascend_limits(c, p);
  return p;
}

}  // namespace kvbench
