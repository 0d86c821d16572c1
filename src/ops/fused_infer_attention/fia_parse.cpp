// aclnn.FusedInferAttentionScoreV3: a case file's attributes checked against the operator's
// constraints (spec "Constraints"); the quantized modes' are in fia_parse_quant.cpp, the Atlas A2
// limits ("ascend_limits") in fia_ascend_limits.cpp.
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
int64_t per_batch(const std::vector<int64_t>& a, int64_t b) {
  return a.size() == 1 ? a[0] : a[static_cast<size_t>(b)];
}

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
  c.require_memory(terms,
                   "the query, output, K/V and per-batch lengths of " + std::to_string(p.B) + " batches");
}

void parse_lengths(Args& c, FiaParams& p) {
  if (c.written("actualSeqLengths")) p.act_q = c.integers("actualSeqLengths");
  if (c.written("actualSeqLengthsKv")) p.act_kv = c.integers("actualSeqLengthsKv");
  if (p.tnd) {
    for (const char* k : {"B", "S1", "S2"})
      if (c.written(k))
        c.fail(k, std::string(k) + " comes from the actual lengths with inputLayout " + p.layout +
                      "; do not write it");
    if (p.act_q.empty())
      c.fail("actualSeqLengths", "inputLayout " + p.layout + " needs actualSeqLengths (cumulative ends)");
    if (p.act_kv.empty())
      c.fail("actualSeqLengthsKv", "inputLayout " + p.layout + " needs actualSeqLengthsKv");
    p.B = static_cast<int64_t>(p.act_q.size());
    if (p.act_kv.size() != p.act_q.size())
      c.fail("actualSeqLengthsKv", "with inputLayout " + p.layout +
                                       " actualSeqLengthsKv has one entry per batch, as actualSeqLengths (" +
                                       std::to_string(p.B) + ")");
    p.S1 = p.act_q.back();
    check_memory_before_lists(c, p);
    const bool kv_cumulative = !p.paged();  // page attention: per-batch kv lengths
    int64_t prev_q = 0, prev_kv = 0;
    for (int64_t b = 0; b < p.B; ++b) {
      const int64_t q = p.act_q[b], kv = p.act_kv[b];
      if (q < prev_q)
        c.fail_at("actualSeqLengths", static_cast<size_t>(b), "cumulative ends must not decrease");
      if (kv_cumulative && kv < prev_kv)
        c.fail_at("actualSeqLengthsKv", static_cast<size_t>(b), "cumulative ends must not decrease");
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
      if (a[i] > limit)
        c.fail_at(key, i, std::string("a length above ") + what + " = " + std::to_string(limit));
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
  if (p.sparse >= 2)
    c.fail("sparseMode", "left padding with sparseMode 2-4 has no documented alignment origin; use 0 or 1");
  if (p.q_pad >= 0) {
    if (p.ifa()) c.fail("queryPaddingSize", "queryPaddingSize needs Q_S > 1");
    if (p.act_q.empty()) c.fail("queryPaddingSize", "queryPaddingSize needs actualSeqLengths (the document)");
  }
  if (p.kv_pad >= 0 && p.act_kv.empty())
    c.fail("kvPaddingSize", "kvPaddingSize needs actualSeqLengthsKv (the document)");
  for (int64_t b = 0; b < p.B; ++b) {
    if (p.q_pad >= 0) {
      p.q_start[b] = p.S1 - p.q_pad - p.s1b[b];
      if (p.q_start[b] < 0)
        c.fail("queryPaddingSize", "batch " + std::to_string(b) +
                                       " starts before row 0 (S1 - queryPaddingSize - actualSeqLengths < 0)");
    }
    if (p.kv_pad >= 0) {
      p.kv_start[b] = p.S2 - p.kv_pad - p.s2b[b];
      if (p.kv_start[b] < 0 && !p.ifa())
        c.fail("kvPaddingSize", "batch " + std::to_string(b) +
                                    " starts before key 0 (S2 - kvPaddingSize - actualSeqLengthsKv < 0)");
      if (p.kv_start[b] < 0)
        p.kv_start[b] = 0, p.s2b[b] = 0;  // Q_S = 1: the batch's output is 0 (documented)
    }
  }
}

// Shared prefix: every batch attends to prefix[:Lp] and then its own keys.
void parse_prefix(Args& c, FiaParams& p) {
  p.S_prefix = c.integer("S_prefix");
  if (!p.has_prefix()) {
    if (c.written("actualSharedPrefixLen"))
      c.fail("actualSharedPrefixLen", "actualSharedPrefixLen needs a shared prefix (S_prefix > 0)");
    return;
  }
  p.prefix_len = c.written("actualSharedPrefixLen") ? c.integer("actualSharedPrefixLen") : p.S_prefix;
  if (p.prefix_len > p.S_prefix)
    c.fail("actualSharedPrefixLen", "actualSharedPrefixLen must not exceed the prefix's S (S_prefix)");
  if (p.paged()) c.fail("S_prefix", "a shared prefix takes no page attention (the document)");
  if (p.left_padded()) c.fail("S_prefix", "a shared prefix takes no left padding (the document)");
  if (p.tnd) c.fail("S_prefix", "a shared prefix takes no TND layout");
}

// Tensorlist key/value (non-contiguous KV): per batch its own key.b / value.b of batch 1,
// and the document's exclusions ("非连续场景下key、value的tensorlist中的batch只能为1,个数等于
// query的B ... B不能大于256"; page attention, left padding, prefix, antiquant and MLA take no
// tensorlist).
void parse_tensorlist(Args& c, FiaParams& p) {
  p.tensorlist = c.boolean("kv_tensorlist");
  if (!p.tensorlist) return;
  const std::string why = " (the document)";
  if (p.B > 256)
    c.fail("B", "a tensorlist holds at most 256 batches (the document: \"非连续场景下B不能大于256\")");
  if (p.tnd) c.fail("inputLayout", "TND layouts take no tensorlist" + why);
  if (p.paged()) c.fail("blockSize", "page attention takes no tensorlist" + why);
  if (p.left_padded())
    c.fail(p.q_pad >= 0 ? "queryPaddingSize" : "kvPaddingSize", "left padding takes no tensorlist" + why);
  if (p.has_prefix()) c.fail("S_prefix", "a shared prefix takes no tensorlist" + why);
  if (p.quant.on) c.fail("key", "KV antiquant takes no tensorlist" + why);
  if (p.rope) c.fail("rope", "MLA takes no tensorlist" + why);
  for (int64_t b = 0; b < p.B; ++b)
    if (p.s2b[b] == 0)
      c.fail("actualSeqLengthsKv", "batch " + std::to_string(b) + " has no key: its tensorlist element key." +
                                       std::to_string(b) +
                                       " would be empty (kvbench writes no empty tensor)");
}

// The NZ cache: the document defines it for MLA with D 512 only ("key&value&keyRope支持ND和
// NZ输入"), with its own limits there.
void parse_nz(Args& c, const FiaParams& p) {
  if (!p.nz) return;
  if (p.rope == 0 || p.D != 512)
    c.fail("kv_cache_layout",
           "the NZ cache is MLA's: it needs rope 64 and D 512 (the document defines it there only)");
  if (p.Dv % 16 != 0) c.fail("Dv", "the NZ cache holds 16-channel fractals: Dv is a multiple of 16");
  if (p.block_size != 128)
    c.fail("blockSize", "the NZ cache takes blockSize 128 only (the document: \"NZ输入不支持配置16\")");
  if (p.layout == "BNSD" || p.layout == "BNSD_NBSD")
    c.fail("inputLayout",
           "the NZ cache takes no BNSD or BNSD_NBSD layout (the document: \"NZ输入不支持BNSD、BNSD_NBSD\")");
}

// MLA: the rope channels join the contraction; the document excludes the rest.
void parse_rope(Args& c, FiaParams& p) {
  p.rope = c.integer("rope");
  p.rope_antiquant_scale = c.boolean("with_keyRopeAntiquantScale");
  if (p.rope_antiquant_scale && !p.rope)
    c.fail("with_keyRopeAntiquantScale",
           "keyRopeAntiquantScale is MLA's (the dequantization of keyRope): it needs rope 64");
  if (!p.rope) return;
  const std::string why =
      " (the document: MLA takes no left padding, pse, prefix, antiquant, full quant or post-quant)";
  if (p.left_padded()) c.fail("rope", "MLA with left padding is rejected" + why);
  if (p.pse != "none") c.fail("rope", "MLA with pseShift is rejected" + why);
  if (p.has_prefix()) c.fail("rope", "MLA with a shared prefix is rejected" + why);
  if (p.quant.on) c.fail("rope", "MLA with KV antiquant is rejected" + why);
  if (p.post.on) c.fail("rope", "MLA with an int8 output is rejected" + why);
  if (p.full.on) c.fail("rope", "MLA with INT8 query, key and value (全量化) is rejected" + why);
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
      c.fail("attenMask_shape",
             "inputLayout " + p.layout +
                 " takes no mask in sparseMode 0/1 (the document: sparse 0 without mask, or 3/4 with mask)");
  }
  if (p.compressed_mask() && p.mask_pad)
    c.fail("attenMask_pad", "the compressed mask is exactly 2048 x 2048");
  if (!p.has_mask() && p.mask_pad) c.fail("attenMask_pad", "attenMask_pad needs attenMask");
  if (p.pse != "none" && p.tnd) c.fail("pseShift_shape", "inputLayout " + p.layout + " takes no pseShift");
  if (p.pse == "none" && p.pse_pad) c.fail("pseShift_pad", "pseShift_pad needs pseShift");
  if (p.masked_rows) {
    if (!p.mask_applies() || p.ifa())
      c.fail("masked_rows", "fully masked rows need a full attenMask (sparseMode 0 or 1, S1 > 1)");
    if (p.inner_precise < 2)
      c.fail("masked_rows",
             "a row whose every key is masked is undocumented without the row-invalid correction: set "
             "innerPrecise 2 or 3");
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
      c.fail("nextTokens", "a negative nextTokens must be " + bound + (p.sparse == 0 ? "S1b" : "S2b") +
                               " = " + std::to_string(-rows) + " (batch " + std::to_string(b) + ")");
    if (p.pre < 0 && -p.pre >= cols + inclusive)
      c.fail("preTokens", "a negative preTokens must be " + bound + (p.sparse == 0 ? "S2b" : "S1b") + " = " +
                              std::to_string(-cols) + " (batch " + std::to_string(b) + ")");
  }
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
  if (p.sparse > 4)
    c.fail("sparseMode",
           "sparseMode 5-8 (prefix, global, dilated, block_local) are unsupported by the operator");
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
  p.nz = c.string("kv_cache_layout") == "NZ";
  if (!p.paged() && c.written("kv_cache_layout"))
    c.fail("kv_cache_layout", "kv_cache_layout needs page attention (blockSize > 0)");
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
  // Empty key and value tensors: the device fills attentionOut with zeros (the document) and
  // writes no softmaxLse (PFA's empty-tensor kernel writes attentionOut only): kvbench could
  // not say what a correct device's lse holds (spec Decisions).
  if (p.lse && p.S2 == 0 && !p.paged())
    c.fail("softmaxLseFlag",
           "with empty key and value (S2 = 0) the device writes attentionOut zeros and no softmaxLse: set "
           "softmaxLseFlag false");
  parse_left_padding(c, p);
  parse_prefix(c, p);
  parse_mask_and_pse(c, p);
  parse_fia_antiquant(c, p);
  parse_fia_post_quant(c, p);
  parse_fia_full_quant(c, p);
  parse_rope(c, p);
  parse_nz(c, p);
  parse_tensorlist(c, p);
  if (p.left_padded() && p.quant.codes == DType::s4)
    c.fail("kvPaddingSize", "left padding takes no int4 KV (the document)");
  check_band(c, p);
  p.scale = round_f32(c.number("scaleValue"));
  if (!std::isfinite(p.scale)) c.fail("scaleValue", "scaleValue must be finite in f32");
  for (int64_t b = 0; b < p.B; ++b)
    // Sparse 0 with left padding ignores preTokens/nextTokens (the document).
    p.band.push_back(
        fia_band(p.sparse, p.pre, p.next, p.has_mask() && !p.left_padded(), p.ifa(), p.s1b[b], p.keys(b)));
  if (c.boolean("ascend_limits")) check_ascend_limits(c, p);
  return p;
}

}  // namespace kvbench
