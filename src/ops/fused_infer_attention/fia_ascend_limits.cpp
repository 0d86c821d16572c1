// aclnn.FusedInferAttentionScoreV3: `ascend_limits: true`, the Atlas A2 limits the
// document lists (spec "ascend_limits"), each rejection naming its rule.
#include <algorithm>
#include <string>

#include "ops/fused_infer_attention/fia_params.hpp"

namespace kvbench {
namespace {

// The document's alignments of D and blockSize by dtype (Atlas A2).
void check_ascend_alignment(Args& c, const FiaParams& p) {
  auto need = [&](bool ok, const char* key, const std::string& why) {
    if (!ok) c.fail(key, "ascend_limits: " + why);
  };
  const bool int8 = (p.quant.codes == DType::i8 && p.quant.on) || p.full.on,
             int4 = p.quant.codes == DType::s4 && p.quant.on;
  const auto misaligned = [&](int64_t m) { return p.D % m != 0 ? "D" : "Dv"; };  // the head size at fault
  if (p.ifa()) {
    if (p.paged() && int8)
      need(p.block_size % 32 == 0, "blockSize",
           "with Q_S = 1, page attention with int8 K/V needs blockSize a multiple of 32");
    if (int4)
      need(p.D % 64 == 0 && p.Dv % 64 == 0, misaligned(64),
           "with Q_S = 1, int4 K/V needs D and Dv multiples of 64");
  } else {
    if (int8 || p.post.on)
      need(p.D % 32 == 0 && p.Dv % 32 == 0, misaligned(32),
           "with Q_S > 1 and int8 in the inputs or output, D and Dv are multiples of 32");
    if (int4)
      need(p.D % 64 == 0 && p.Dv % 64 == 0, misaligned(64),
           "with Q_S > 1 and int4 K/V, D and Dv are multiples of 64");
  }
  if (p.post.on && p.post.per_channel) {
    need(p.Dv % 32 == 0, c.written("Dv") ? "Dv" : "D",
         "per-channel post-quant needs the int8 output rows 32-byte aligned (Dv a multiple of 32)");
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
  need(!a.fp8(), "key",
       "FLOAT8_E4M3FN key/value are the Ascend 950's (aclnnFusedInferAttentionScoreV5); the Atlas A2 takes "
       "int8/int4");
  need(
      !a.hif8(), "key",
      "HIFLOAT8 key/value are the Ascend 950's (aclnnFusedInferAttentionScoreV3/V5 on Ascend 950); the Atlas "
      "A2 takes int8/int4");
  need(a.key_mode != 6, "keyAntiquantMode",
       "with Q_S = 1 the Atlas A2 takes keyAntiquantMode 0-5 (the document; per-token-group is not among "
       "them)");
  if (!a.combined && !p.ifa()) {
    const std::string rule = "separate K/V antiquant parameters with Q_S > 1 ";
    need(p.S1 <= 16, "S1", rule + "need Q_S <= 16");
    need(p.q == DType::bf16, "query", rule + "need a bf16 query");
    need(!p.post.on, "attentionOut", rule + "need a bf16 output (no int8 post-quant)");
    need(a.codes == DType::i8, "key", rule + "need int8 K/V");
    need(a.key_mode == a.value_mode, "valueAntiquantMode", rule + "need equal key and value modes");
    need(!a.per_tensor, "antiquant_per_tensor", rule + "are per-channel or per-token only");
    need(p.q_pad < 0 && p.kv_pad < 0, p.q_pad >= 0 ? "queryPaddingSize" : "kvPaddingSize",
         rule + "take no left padding");
    need(!p.paged(), "blockSize", rule + "take no page attention");
  }
  if (p.ifa() && a.key_mode == 0 && a.value_mode == 1 && a.codes == DType::i8) {
    need(p.q == DType::f16, "query",
         "the key per-channel / value per-token pair with int8 K/V takes an f16 query");
    need(!p.post.on, "attentionOut",
         "the key per-channel / value per-token pair with int8 K/V takes an f16 output");
  }
}

}  // namespace

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
    if (p.ifa())
      need(p.block_size % 16 == 0 && p.block_size <= 512, "blockSize",
           "with Q_S = 1, blockSize is a multiple of 16, at most 512");
    else
      need(p.block_size % 128 == 0 && p.block_size <= 512, "blockSize",
           "with Q_S > 1, blockSize is 128, 256, 384 or 512");
    need(p.bnnbsd || p.Nkv * p.D <= 65535, "kv_cache_layout",
         "BnBsH needs numKeyValueHeads * D <= 65535 (use BnNBsD)");
  }
  if (p.ifa()) need(p.inner_precise <= 1, "innerPrecise", "with Q_S = 1 only innerPrecise 0 or 1");
  if (p.layout == "BNSD_BSND") need(!p.ifa(), "inputLayout", "BNSD_BSND takes Q_S > 1 only (the document)");
  if (p.out == FiaOrder::NBSD)
    need(!p.ifa() && p.S1 <= 16, "inputLayout",
         "the NBSD outputs take Q_S > 1 and at most 16 (the document)");
  check_ascend_alignment(c, p);
  if (p.quant.on) check_ascend_antiquant(c, p);
  if (p.rope) {
    need(p.D == 512 || p.D == 128, "D", "MLA takes D 512 or 128");
    if (p.D == 512) {
      need(p.paged() && (p.block_size == 16 || p.block_size == 128), "blockSize",
           "MLA with D 512 needs page attention, blockSize 16 or 128");
      need(p.Nkv == 1, "numKeyValueHeads", "MLA with D 512 takes one kv head");
      need(p.tnd || p.S1 <= 16, "S1", "MLA with D 512 takes 1-16 query tokens");
      need(p.N <= 128 && (p.N & (p.N - 1)) == 0, "numHeads",
           "MLA with D 512 takes numHeads 1, 2, 4, 8, 16, 32, 64 or 128");
      need(p.layout != "BNSD_BSND", "inputLayout",
           "MLA with D 512 takes no BNSD_BSND layout (not in the document's list)");
      if (p.tnd) {
        need(p.N >= 32, "numHeads", "MLA with D 512 in TND layouts takes numHeads 32, 64 or 128");
        need(*std::max_element(p.s1b.begin(), p.s1b.end()) <= 16, "actualSeqLengths",
             "MLA with D 512 in TND layouts takes 1-16 query tokens per batch");
        need(p.layout != "NTD_TND", "inputLayout", "MLA with D 512 takes TND or TND_NTD, not NTD_TND");
      } else if (p.S1 == 1) {
        need(p.sparse == 0 && !p.has_mask(), "sparseMode",
             "MLA with D 512 and Q_S = 1 takes only sparse 0 without a mask");
      } else {
        need(p.sparse == 3 && p.has_mask(), "sparseMode",
             "MLA with D 512 and Q_S > 1 takes only sparse 3 with a mask");
      }
    } else {
      need(p.tnd && !p.paged(), "inputLayout", "MLA with D 128 takes TND or NTD_TND without page attention");
    }
  }
  if (!p.tnd) return;
  const bool ntd = p.layout == "NTD_TND";
  need(p.B <= 4096, "actualSeqLengths", "at most 4096 batches with TND layouts");
  need((p.sparse == 0 && !p.has_mask()) || p.sparse == 3 || p.sparse == 4, "sparseMode",
       "TND layouts take sparse 0 without mask, or 3/4 with the compressed mask");
  if (p.rope && p.D == 512)
    return;  // the document's TND rules for D 512 are MLA's (above); the rest are for other D
  if (ntd) {
    need((p.D == 128 || p.D == 192) && p.Dv == 128, "D", "NTD_TND takes D 128 or 192 and Dv 128");
    need(p.q == DType::bf16, "query", "NTD_TND takes bf16");
    need(!p.paged(), "blockSize", "NTD_TND has no page attention");
  } else {
    need((p.D == p.Dv && p.D <= 256) || (p.D == 192 && (p.Dv == 128 || p.Dv == 192)), "Dv",
         "TND takes D = Dv <= 256, or D 192 with Dv 128 or 192");
  }
  if (p.N == p.Nkv && p.q == DType::f16) {
    need(p.sparse == 0, "sparseMode", "TND MHA in f16 takes only sparse 0 without mask");
    need(p.inner_precise == 1, "innerPrecise", "TND MHA in f16 takes only innerPrecise 1");
    need(!p.paged(), "blockSize", "TND MHA in f16 has no page attention");
  }
  if (p.N != p.Nkv) {
    need(p.q != DType::f16 || p.sparse != 4, "sparseMode",
         "TND GQA in f16 takes only sparse 0 without mask, or 3");
    need(p.inner_precise == 0, "innerPrecise", "TND GQA takes only innerPrecise 0");
    need(!p.paged() || (!p.bnnbsd && p.block_size == 128), "blockSize",
         "TND GQA page attention is BnBsH with blockSize 128");
  }
  if (p.sparse == 3)
    for (int64_t b = 0; b < p.B; ++b)
      need(p.s1b[b] < p.s2b[b], "actualSeqLengths",
           "TND sparse 3 needs each batch's query length below its kv length");
}

}  // namespace kvbench
