#include "ops/fused_infer_attention/fia_params.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/float_format.hpp"

namespace kvbench {
namespace {

constexpr int64_t kIntMax = 2147483647;
const std::vector<nlohmann::json> kFullMasks{"S1,S2", "1,S1,S2", "B,1,S1,S2", "1,1,S1,S2"};
const std::vector<nlohmann::json> kIfaMasks{"B,S2", "B,1,S2", "B,1,1,S2"};
const std::vector<nlohmann::json> kCompressedMasks{"2048,2048", "1,2048,2048", "1,1,2048,2048"};

std::vector<nlohmann::json> mask_choices() {
  std::vector<nlohmann::json> v{"none"};
  for (const auto* list : {&kFullMasks, &kIfaMasks, &kCompressedMasks})
    v.insert(v.end(), list->begin(), list->end());
  return v;
}

}  // namespace

Band fia_band(int sparse, int64_t pre, int64_t next, bool masked, bool ifa, int64_t S1b, int64_t S2b) {
  const int64_t delta = S2b - S1b;
  Band b{-S1b, S2b};  // everything
  if (!ifa) {
    if (sparse == 0 && masked)
      b = {-pre, next};
    else if (sparse == 2)
      b = {-S1b, 0};
    else if (sparse == 3)
      b = {-S1b, delta};
    else if (sparse == 4)
      b = {delta - pre, delta + next};
  }
  return {std::clamp(b.lo, -S1b, S2b), std::clamp(b.hi, -S1b, S2b)};
}

const Signature& fia_signature() {
  const std::vector<nlohmann::json> layouts{"BSH",       "BSND",      "BNSD", "BNSD_BSND", "BSH_NBSD",
                                            "BSND_NBSD", "BNSD_NBSD", "TND",  "NTD_TND",   "TND_NTD"};
  static const Signature sig{
      .id = "aclnn.FusedInferAttentionScoreV3",
      .doc =
          "Ascend fused prompt/incremental flash attention: layouts, sparse modes 0-4, bool/int8 masks, pse, "
          "page attention, softmaxLse, KV antiquant, full int8, post-quant "
          "(specs/fused_infer_attention_score.md)",
      .params =
          {
              {.section = "attributes", .name = "numHeads", .min = 1, .doc = "query heads N"},
              {.section = "attributes",
               .name = "scaleValue",
               .type = ParamType::number,
               .fallback = 1.0,
               .doc = "score multiplier, rounded to f32 (the operator's default 1.0, not 1/sqrt(D))"},
              {.section = "attributes",
               .name = "preTokens",
               .fallback = kIntMax,
               .min = -kIntMax,
               .max = kIntMax,
               .doc = "keys before the diagonal a row may see (sparse 0 with a mask, 4)"},
              {.section = "attributes",
               .name = "nextTokens",
               .fallback = kIntMax,
               .min = -kIntMax,
               .max = kIntMax,
               .doc = "keys after the diagonal a row may see (sparse 0 with a mask, 4)"},
              {.section = "attributes",
               .name = "inputLayout",
               .type = ParamType::string,
               .fallback = "BSH",
               .allowed = layouts,
               .doc = "query/key/value layout, and the output's after '_'"},
              {.section = "attributes",
               .name = "numKeyValueHeads",
               .fallback = 0,
               .min = 0,
               .doc = "kv heads; 0 = numHeads"},
              {.section = "attributes",
               .name = "sparseMode",
               .fallback = 0,
               .min = 0,
               .max = 8,
               .doc =
                   "0 default/band, 1 allMask, 2 leftUpCausal, 3 rightDownCausal, 4 band (5-8 unsupported)"},
              {.section = "attributes",
               .name = "innerPrecise",
               .fallback = 1,
               .min = 0,
               .max = 3,
               .doc = "bit 0 precision/performance, bit 1 row-invalid correction (2, 3)"},
              {.section = "attributes",
               .name = "blockSize",
               .fallback = 0,
               .min = 0,
               .doc = "page attention block size; 0 = off"},
              {.section = "attributes",
               .name = "softmaxLseFlag",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "write softmaxLse (else a [1] zero tensor)"},
              {.section = "attributes",
               .name = "kv_cache_layout",
               .type = ParamType::string,
               .fallback = "BnBsH",
               .allowed = {"BnBsH", "BnNBsD", "NZ"},
               .doc = "page attention cache: (blocks, blockSize, Nkv*D), (blocks, Nkv, blockSize, D), or NZ "
                      "(blocks, Nkv, D/16, blockSize, 16) for MLA"},
              {.section = "attributes",
               .name = "attenMask_shape",
               .type = ParamType::string,
               .fallback = "none",
               .allowed = mask_choices(),
               .doc = "attenMask's shape (S2 = KV_S plus attenMask_pad)"},
              {.section = "attributes",
               .name = "pseShift_shape",
               .type = ParamType::string,
               .fallback = "none",
               .allowed = {"none", "B,N,S1,S2", "1,N,S1,S2"},
               .doc = "pseShift's shape (S2 = KV_S plus pseShift_pad)"},
              {.section = "attributes",
               .name = "keyAntiquantMode",
               .fallback = 0,
               .min = 0,
               .max = 6,
               .doc = "int8/int4 key: 0 per-channel (or per-tensor), 1 per-token, 2 per-tensor+head, 3 "
                      "per-token+head, 4/5 in PA blocks; 6 per-token-group (FP4 key)"},
              {.section = "attributes",
               .name = "valueAntiquantMode",
               .derived = "keyAntiquantMode",
               .min = 0,
               .max = 6,
               .doc = "as keyAntiquantMode; differs only as the pair key 0, value 1"},
              {.section = "attributes",
               .name = "antiquantMode",
               .fallback = 0,
               .min = 0,
               .max = 1,
               .doc = "legacy combined parameters: 0 per-channel (or per-tensor), 1 per-token"},
              {.section = "attributes",
               .name = "antiquant_combined",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "use the legacy combined antiquantScale/antiquantOffset (index 0 key, 1 value)"},
              {.section = "attributes",
               .name = "antiquant_per_tensor",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "mode 0 with one scale for the whole tensor (shape [1])"},
              {.section = "attributes",
               .name = "antiquant_offset",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "keyAntiquantOffset/valueAntiquantOffset given (asymmetric)"},
              {.section = "attributes",
               .name = "postquant_per_channel",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "int8 output: quantScale2/quantOffset2 per (head, channel) instead of per tensor"},
              {.section = "attributes",
               .name = "postquant_offset",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "int8 output: quantOffset2 given"},
              {.section = "attributes",
               .name = "postquant_ties",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "int8 output: value rows equal per (batch, kv head) in multiples of 1/8 and "
                      "quantScale2 4, offset 0.5: outputs at rounding ties"},
              {.section = "attributes",
               .name = "with_deqScale1",
               .type = ParamType::boolean,
               .derived = "true with an INT8 query",
               .doc = "full int8: deqScale1 given (the document requires it with INT8 query/key/value, "
                      "forbids it otherwise)"},
              {.section = "attributes",
               .name = "with_quantScale1",
               .type = ParamType::boolean,
               .derived = "true with an INT8 query",
               .doc = "full int8: quantScale1 given (as with_deqScale1)"},
              {.section = "attributes",
               .name = "with_deqScale2",
               .type = ParamType::boolean,
               .derived = "true with an INT8 query",
               .doc = "full int8: deqScale2 given (as with_deqScale1)"},
              {.section = "attributes",
               .name = "with_quantScale2",
               .type = ParamType::boolean,
               .derived = "true with an INT8 output",
               .doc = "quantScale2 given (the document requires it with an INT8 output, forbids it with INT8 "
                      "in and FLOAT16 out)"},
              {.section = "attributes",
               .name = "with_keyRopeAntiquantScale",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "MLA: give keyRopeAntiquantScale, which V3 reserves (\"当前版本不生效\"): NaN-filled, "
                      "it must not change the result"},
              {.section = "attributes",
               .name = "kv_tensorlist",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "key and value as tensorlists (non-contiguous KV): key.b / value.b per batch, batch 1, "
                      "S2b tokens each"},
              {.section = "attributes",
               .name = "ascend_limits",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "also enforce the Atlas A2 hardware limits the document lists"},
              {.section = "shapes",
               .name = "B",
               .derived = "required; TND layouts: the number of actual lengths",
               .min = 1,
               .doc = "batch"},
              {.section = "shapes",
               .name = "S1",
               .derived = "required; TND layouts: T, the last cumulative query length",
               .min = 1,
               .doc = "query length Q_S (T for TND)"},
              {.section = "shapes",
               .name = "S2",
               .derived = "required; TND layouts: from actualSeqLengthsKv",
               .min = 0,
               .doc = "key/value length KV_S (Tkv for TND; the longest kv length with page attention)"},
              {.section = "shapes", .name = "D", .min = 1, .doc = "query/key head size"},
              {.section = "shapes", .name = "Dv", .derived = "D", .min = 1, .doc = "value/output head size"},
              {.section = "shapes",
               .name = "S_prefix",
               .fallback = 0,
               .min = 0,
               .doc = "tokens of keySharedPrefix/valueSharedPrefix (0: no shared prefix)"},
              {.section = "shapes",
               .name = "rope",
               .fallback = 0,
               .allowed = {0, 64},
               .doc = "MLA: channels of queryRope/keyRope (64), added to the contraction; 0 = none"},
              {.section = "shapes",
               .name = "attenMask_pad",
               .fallback = 0,
               .min = 0,
               .doc = "extra columns of attenMask"},
              {.section = "shapes",
               .name = "pseShift_pad",
               .fallback = 0,
               .min = 0,
               .doc = "extra columns of pseShift"},
              {.section = "shapes",
               .name = "masked_rows",
               .fallback = 0,
               .min = 0,
               .doc = "last rows of every batch fully masked by attenMask (innerPrecise 2/3)"},
              {.section = "inputs",
               .name = "actualSeqLengths",
               .type = ParamType::integers,
               .derived = "absent: S1 per batch",
               .min = 0,
               .doc = "query lengths per batch (TND: cumulative ends)"},
              {.section = "inputs",
               .name = "queryPaddingSize",
               .derived = "absent: right padding",
               .min = -kIntMax,
               .doc =
                   "left padding of the query: batch b uses rows [S1 - pad - len, S1 - pad); negative = 0"},
              {.section = "inputs",
               .name = "kvPaddingSize",
               .derived = "absent: right padding",
               .min = -kIntMax,
               .doc = "left padding of key/value: keys [S2 - pad - len, S2 - pad); negative = 0"},
              {.section = "inputs",
               .name = "actualSharedPrefixLen",
               .derived = "absent: S_prefix",
               .min = 0,
               .doc = "prefix tokens every batch attends to"},
              {.section = "inputs",
               .name = "actualSeqLengthsKv",
               .type = ParamType::integers,
               .derived = "absent: S2 per batch",
               .min = 0,
               .doc = "kv lengths per batch (TND without page attention: cumulative ends)"},
          },
      .tensors =
          {
              {.name = "query",
               .shape = "by inputLayout",
               .choices = {DType::f16, DType::bf16, DType::f32, DType::i8},
               .dtype_rule = "f16 (default), bf16, f32 (kvbench extension), i8 (full int8)",
               .range = {{-1, 1}},
               .doc = "i8: codes round(x * 127 / R) of values x drawn in the range, R its largest magnitude"},
              {.name = "key",
               .shape = "by inputLayout, or the page-attention cache",
               .choices = {DType::i8, DType::s4, DType::f4e2m1, DType::f4e1m2},
               .dtype_rule = "= query, or i8/s4 codes (KV antiquant), f4e2m1/f4e1m2 (per-token-group)",
               .range = {{-1, 1}},
               .doc = "codes quantized from values drawn in the range",
               .list = true},
              {.name = "value",
               .shape = "as key with Dv",
               .choices = {DType::i8, DType::s4, DType::f4e2m1, DType::f4e1m2},
               .dtype_rule = "= key",
               .range = {{-1, 1}},
               .list = true},
              {.name = "antiquantScale",
               .shape = "(2, Nkv, D), (2) per-tensor, (2, B, S) per-token",
               .dtype_rule = "= query (mode 0), f32 (mode 1)",
               .present = "antiquant_combined"},
              {.name = "antiquantOffset",
               .shape = "as antiquantScale",
               .dtype_rule = "as antiquantScale",
               .present = "antiquant_combined and antiquant_offset"},
              {.name = "keyAntiquantScale",
               .shape = "by keyAntiquantMode",
               .dtype_rule = "= query (modes 0, 2), f8e8m0 (6), f32",
               .present = "key i8, s4 or FP4"},
              {.name = "keyAntiquantOffset",
               .shape = "as keyAntiquantScale",
               .dtype_rule = "as keyAntiquantScale",
               .present = "antiquant_offset"},
              {.name = "valueAntiquantScale",
               .shape = "by valueAntiquantMode",
               .dtype_rule = "= query (modes 0, 2), f8e8m0 (6), f32",
               .present = "key i8, s4 or FP4"},
              {.name = "valueAntiquantOffset",
               .shape = "as valueAntiquantScale",
               .dtype_rule = "as valueAntiquantScale",
               .present = "antiquant_offset"},
              {.name = "deqScale1",
               .shape = "[1]",
               .dtype_rule = "f32",
               .present = "with_deqScale1",
               .doc = "derived: (R_q / 127) * (R_k / 127), its low 13 bits cleared (19-bit, as the device)"},
              {.name = "quantScale1",
               .shape = "[1]",
               .dtype_rule = "f32",
               .range = {{64, 128}},
               .present = "with_quantScale1",
               .doc = "P's int8 scale: code = round(exp(s - max) * quantScale1), at most 127"},
              {.name = "deqScale2",
               .shape = "[1]",
               .dtype_rule = "f32",
               .present = "with_deqScale2",
               .doc = "derived: (R_v / 127) / quantScale1, its low 13 bits cleared"},
              {.name = "pseShift",
               .shape = "pseShift_shape",
               .dtype_rule = "= query; f16 with an i8 query",
               .range = {{-1, 1}},
               .present = "pseShift_shape != none"},
              {.name = "attenMask",
               .shape = "attenMask_shape",
               .choices = {DType::boolean, DType::i8, DType::u8},
               .dtype_rule = "bool (default), i8 or u8; 1 = masked",
               .present = "attenMask_shape != none"},
              {.name = "actualSeqLengths", .shape = "[len]", .dtype_rule = "i64", .present = "written"},
              {.name = "actualSeqLengthsKv", .shape = "[len]", .dtype_rule = "i64", .present = "written"},
              {.name = "queryPaddingSize", .shape = "[1]", .dtype_rule = "i64", .present = "written"},
              {.name = "kvPaddingSize", .shape = "[1]", .dtype_rule = "i64", .present = "written"},
              {.name = "keySharedPrefix",
               .shape = "[1, S_prefix, ...] in the key's layout",
               .dtype_rule = "= query",
               .range = {{-1, 1}},
               .present = "S_prefix > 0"},
              {.name = "valueSharedPrefix",
               .shape = "as keySharedPrefix with Dv",
               .dtype_rule = "= query",
               .range = {{-1, 1}},
               .present = "S_prefix > 0"},
              {.name = "actualSharedPrefixLen", .shape = "[1]", .dtype_rule = "i64", .present = "written"},
              {.name = "queryRope",
               .shape = "as query with rope channels",
               .dtype_rule = "= query",
               .range = {{-1, 1}},
               .present = "rope > 0"},
              {.name = "keyRope",
               .shape = "as key with rope channels",
               .dtype_rule = "= query",
               .range = {{-1, 1}},
               .present = "rope > 0"},
              {.name = "keyRopeAntiquantScale",
               .shape = "[1] (kvbench's choice: the document gives none)",
               .dtype_rule = "= query",
               .present = "with_keyRopeAntiquantScale",
               .doc = "reserved by the document, not in effect: every element NaN"},
              {.name = "blockTable",
               .shape = "[B, maxBlocksPerSeq]",
               .dtype_rule = "i32",
               .present = "blockSize > 0",
               .doc = "a seeded shuffle of the blocks; entries past a batch's last block name the "
                      "NaN-poisoned spare block"},
              {.name = "quantScale2",
               .shape = "[1], or [N, Dv] ([H] for BSH) per channel",
               .choices = {DType::f32, DType::bf16},
               .dtype_rule = "f32 (default), bf16 with a bf16 query",
               .range = {{30, 130}},
               .present = "with_quantScale2"},
              {.name = "quantOffset2",
               .shape = "as quantScale2",
               .dtype_rule = "= quantScale2",
               .range = {{-20, 20}},
               .present = "postquant_offset"},
              {.name = "attentionOut",
               .role = Role::output,
               .shape = "by inputLayout's output part",
               .choices = {DType::i8, DType::f16},
               .dtype_rule = "= query (f16 with an i8 query), or i8 (post-quant with quantScale2)"},
              {.name = "softmaxLse",
               .role = Role::output,
               .shape = "[B, N, S1, 1], [T, N, 1]; [1] zero without softmaxLseFlag",
               .dtype_rule = "f32"},
          },
      // Not blockTable: the seeded shuffle a paged K/V from a file must be laid out by.
      .from_files = {"query", "key", "value", "antiquantScale", "antiquantOffset", "keyAntiquantScale",
                     "keyAntiquantOffset", "valueAntiquantScale", "valueAntiquantOffset", "pseShift",
                     "attenMask", "keySharedPrefix", "valueSharedPrefix", "queryRope", "keyRope",
                     "quantScale2", "quantOffset2"},
      .sizes = {"B", "actualSeqLengthsKv", "S2", "actualSeqLengths", "S1", "numHeads", "numKeyValueHeads",
                "D", "Dv", "blockSize", "S_prefix", "actualSharedPrefixLen", "attenMask_pad", "pseShift_pad"},
      .faults = with_attention_faults({
          {"lse_log2", "softmaxLse in base 2 (log2 of the sum, max in log2 units) instead of the natural log",
           ""},
          {"empty_lse_zero", "softmaxLse 0 for a row with no visible key instead of +inf", ""},
          {"band_end_exclusive",
           "row i sees keys up to i + nextTokens exclusive (the causal diagonal dropped)", ""},
          {"band_start_late", "row i sees keys from i - preTokens + 1 (one key too few at the band's start)",
           ""},
          {"gqa_head_mod",
           "query head h reads kv head h % numKeyValueHeads instead of h / (numHeads / numKeyValueHeads)",
           ""},
          {"keys_past_512_dropped", "keys at positions >= 512 ignored",
           "vllm-ascend #15503 (named in issue 36)"},
          {"page_index_stuck",
           "paged K/V: every key read from its batch's first block (block index never advanced)", ""},
          {"post_quant_half_away",
           "post-quant int8 output rounded half away from zero instead of half to even", "issue 36"},
          {"p_code_half_away", "full int8: P's codes rounded half away from zero instead of half to even",
           "issue 36"},
          {"mask_inverted",
           "attenMask read as torch's bool mask (true: attend) instead of Ascend's (true: masked out)",
           "torch.nn.functional.scaled_dot_product_attention's attn_mask convention"},
          {"kv_left_padding_ignored",
           "batch b's K/V rows read from the start of the sequence axis, its start (kvPaddingSize's left "
           "padding, a TND batch's offset) ignored",
           ""},
          {"antiquant_offset_subtracted",
           "antiquant (code - offset) * scale instead of (code + offset) * scale", ""},
          {"int4_nibble_swap", "int4 K/V codes read with the two nibbles of each byte swapped", ""},
      }),
      .variants = with_attention_variants({
          {"ascend_p_cast",
           "exp(s - max) cast to the input dtype before the second matmul, the f32 sum divided out "
           "at the end (full int8 excepted)",
           "hicann/ops-transformer@c29bc10 attention/prompt_flash_attention/op_kernel/"
           "prompt_flash_attention_s1s2_bns1_x910.h (CAST_ROUND), incre_flash_attention"},
          {"ascend_antiquant_fp16",
           "ascend_p_cast with K~ and V~ of int8/int4 antiquant as in(in(code + offset) * "
           "scale), in the input dtype (bf16: the arithmetic in f32, then bf16)",
           "hicann/ops-transformer@c29bc10 prompt_flash_attention x910 (AscendAntiQuant into the workspace)"},
          {"ascend_pfa_fp16_hp",
           "innerPrecise bit 0 on an fp16 prompt: scores and their scaling in fp16, P cast to fp16, the "
           "running P @ V "
           "and its rescale in fp16 per block of 128 keys, the final division in fp16",
           "hicann/ops-transformer@c29bc10 prompt_flash_attention_s1s2_bns1_x910_base.h, "
           "cannmirror/asc-devkit@045bb8a softmax_flashv2_update_impl.h"},
      }),
  };
  return sig;
}

Shape FiaParams::query_shape(int64_t dim) const {
  switch (in) {
    case FiaOrder::BNSD: return {B, N, S1, dim};
    case FiaOrder::TND: return {S1, N, dim};
    case FiaOrder::NTD: return {N, S1, dim};
    default: return bsh ? Shape{B, S1, N * dim} : Shape{B, S1, N, dim};
  }
}

Shape FiaParams::kv_shape(int64_t dim) const {
  if (paged() && nz) return {num_blocks, Nkv, dim / 16, block_size, 16};
  if (paged())
    return bnnbsd ? Shape{num_blocks, Nkv, block_size, dim} : Shape{num_blocks, block_size, Nkv * dim};
  switch (in) {
    case FiaOrder::BNSD: return {B, Nkv, S2, dim};
    case FiaOrder::TND: return {S2, Nkv, dim};
    case FiaOrder::NTD: return {Nkv, S2, dim};
    default: return bsh ? Shape{B, S2, Nkv * dim} : Shape{B, S2, Nkv, dim};
  }
}

Shape FiaParams::out_shape() const {
  switch (out) {
    case FiaOrder::BNSD: return {B, N, S1, Dv};
    case FiaOrder::NBSD: return {N, B, S1, Dv};
    case FiaOrder::TND: return {S1, N, Dv};
    case FiaOrder::NTD: return {N, S1, Dv};
    default: return bsh && layout == "BSH" ? Shape{B, S1, N * Dv} : Shape{B, S1, N, Dv};
  }
}

Shape FiaParams::lse_shape() const {
  if (!lse) return {1};
  return tnd ? Shape{S1, N, 1} : Shape{B, N, S1, 1};
}

Shape FiaParams::mask_shape() const {
  const int64_t cols = kv_tokens() + mask_pad;
  if (mask == "S1,S2") return {S1, cols};
  if (mask == "1,S1,S2") return {1, S1, cols};
  if (mask == "B,1,S1,S2") return {B, 1, S1, cols};
  if (mask == "1,1,S1,S2") return {1, 1, S1, cols};
  if (mask == "B,S2") return {B, cols};
  if (mask == "B,1,S2") return {B, 1, cols};
  if (mask == "B,1,1,S2") return {B, 1, 1, cols};
  if (mask == "2048,2048") return {2048, 2048};
  if (mask == "1,2048,2048") return {1, 2048, 2048};
  return {1, 1, 2048, 2048};
}

Shape FiaParams::pse_shape() const { return {pse[0] == 'B' ? B : 1, N, S1, kv_tokens() + pse_pad}; }

int64_t FiaParams::mask_batch_stride() const {
  if (mask[0] != 'B') return 0;
  const Shape s = mask_shape();
  int64_t n = 1;
  for (size_t k = 1; k < s.size(); ++k) n *= s[k];
  return n;
}

Strides FiaParams::pse_strides() const {
  const int64_t cols = kv_tokens() + pse_pad;
  return {pse[0] == 'B' ? N * S1 * cols : 0, cols, S1 * cols};
}

static Strides order_strides(FiaOrder o, int64_t S, int64_t heads, int64_t dim) {
  switch (o) {
    case FiaOrder::BNSD: return {heads * S * dim, dim, S * dim};
    case FiaOrder::TND: return {0, heads * dim, dim};
    case FiaOrder::NTD: return {0, dim, S * dim};
    default: return {S * heads * dim, heads * dim, dim};
  }
}

Strides FiaParams::query_strides(int64_t dim) const { return order_strides(in, S1, N, dim); }
Strides FiaParams::kv_strides(int64_t dim) const { return order_strides(in, S2, Nkv, dim); }
Strides FiaParams::prefix_strides(int64_t dim) const { return order_strides(in, S_prefix, Nkv, dim); }

Shape FiaParams::list_shape(int64_t b, int64_t dim) const {
  if (in == FiaOrder::BNSD) return {1, Nkv, s2b[b], dim};
  return bsh ? Shape{1, s2b[b], Nkv * dim} : Shape{1, s2b[b], Nkv, dim};
}

Strides FiaParams::list_strides(int64_t b, int64_t dim) const { return order_strides(in, s2b[b], Nkv, dim); }

Shape FiaParams::prefix_shape(int64_t dim) const {
  if (in == FiaOrder::BNSD) return {1, Nkv, S_prefix, dim};
  return bsh ? Shape{1, S_prefix, Nkv * dim} : Shape{1, S_prefix, Nkv, dim};
}

int64_t FiaParams::out_vector(int64_t b, int64_t i, int64_t h) const {
  const int64_t row = query_row(b, i);
  switch (out) {
    case FiaOrder::BNSD: return (b * N + h) * S1 + row;
    case FiaOrder::NBSD: return (h * B + b) * S1 + row;
    case FiaOrder::TND: return row * N + h;
    case FiaOrder::NTD: return h * S1 + row;
    default: return (b * S1 + row) * N + h;
  }
}

int64_t FiaParams::lse_index(int64_t b, int64_t i, int64_t h) const {
  return tnd ? query_row(b, i) * N + h : (b * N + h) * S1 + query_row(b, i);
}

Shape FiaParams::post_quant_shape() const {
  if (!post.per_channel) return {1};
  return out_shape().size() == 3 && !tnd ? Shape{N * Dv} : Shape{N, Dv};
}

Shape FiaParams::combined_antiquant_shape() const {
  if (quant.key_mode == 1) return {2, B, kv_tokens()};
  return quant.per_tensor ? Shape{2} : Shape{2, Nkv, D};
}

Shape FiaParams::antiquant_shape(int mode, int64_t dim) const {
  switch (mode) {
    case 0: return quant.per_tensor ? Shape{1} : ifa() ? Shape{1, Nkv, dim} : Shape{Nkv, dim};
    case 1: return ifa() ? Shape{1, B, kv_tokens()} : Shape{B, kv_tokens()};
    case 2: return {Nkv};
    case 3: return {B, Nkv, kv_tokens()};
    case 4: return {num_blocks, block_size};
    case 6: return {1, B, Nkv, kv_tokens(), dim / 32};
    default: return {num_blocks, Nkv, block_size};
  }
}

int64_t FiaParams::antiquant_index(int mode, int64_t dim, int64_t b, int64_t t, int64_t hk, int64_t d,
                                   int64_t blk, int64_t r) const {
  switch (mode) {
    case 0: return quant.per_tensor ? 0 : hk * dim + d;
    case 1: return b * kv_tokens() + t;
    case 2: return hk;
    case 3: return (b * Nkv + hk) * kv_tokens() + t;
    case 4: return blk * block_size + r;
    case 6: return ((b * Nkv + hk) * kv_tokens() + t) * (dim / 32) + d / 32;
    default: return (blk * Nkv + hk) * block_size + r;
  }
}

}  // namespace kvbench
