#include "ops/multi_head_cache_attention/mhca_params.hpp"

#include <algorithm>
#include <numeric>

#include "core/rng.hpp"
#include "ops/operator.hpp"

namespace kvbench {

int64_t MhcaParams::cache_row(int64_t b, int64_t t) const {
  if (cache_mode == 0) return cachestarts[b] + t;
  return cachestarts[b * max_pages + t / page_size] + t % page_size;
}

std::vector<int64_t> MhcaParams::cache_shape(int64_t last) const {
  const int64_t L = num_layer, H = num_kv_heads, T = max_t;
  switch (cache_layout) {
    case 0: return {T, L, 2, H, last};
    case 1: return {L, T, 2, H, last};
    case 2: return {L, 2, T, H, last};
    default: return {L, 2, H, T, last};
  }
}

size_t MhcaParams::row_offset(int64_t T, int64_t c, int64_t h, int64_t last) const {
  const int64_t L = num_layer, l = layer_idx, H = num_kv_heads, MaxT = max_t;
  int64_t r = 0;
  switch (cache_layout) {
    case 0: r = ((T * L + l) * 2 + c) * H + h; break;
    case 1: r = ((l * MaxT + T) * 2 + c) * H + h; break;
    case 2: r = ((l * 2 + c) * MaxT + T) * H + h; break;
    default: r = ((l * 2 + c) * H + h) * MaxT + T; break;
  }
  return static_cast<size_t>(r * last);
}

const Signature& mhca_signature() {
  static const Signature sig{
      .id = "pmx.dynamic_batching.MultiHeadCacheAttention",
      .doc =
          "store current K/V of a ragged batch in the offset or paged (int8/int4) cache, then attention of "
          "every "
          "query row over its batch's dequantized K/V (specs/multi_head_cache_attention.md)",
      .params =
          {
              {.section = "attributes", .name = "num_heads", .min = 1, .doc = "query heads"},
              {.section = "attributes", .name = "head_dim", .min = 1, .doc = "D"},
              {.section = "attributes",
               .name = "is_causal",
               .type = ParamType::boolean,
               .doc = "causal mask for prefill batches"},
              {.section = "attributes",
               .name = "is_alibi",
               .type = ParamType::boolean,
               .fallback = false,
               .doc = "ALiBi bias (PMX's slopes)"},
              {.section = "attributes",
               .name = "num_kv_heads",
               .fallback = 0,
               .min = 0,
               .doc = "kv heads, divides num_heads; 0 = num_heads"},
              {.section = "attributes",
               .name = "num_layer",
               .fallback = 1,
               .min = 1,
               .doc = "layers in the cache"},
              {.section = "attributes",
               .name = "layer_idx",
               .fallback = 0,
               .min = 0,
               .doc = "the layer used, < num_layer"},
              {.section = "attributes",
               .name = "quant_bit",
               .fallback = 0,
               .allowed = {0, 8, 4},
               .doc = "cache quantization: 0, 8 or 4"},
              {.section = "attributes",
               .name = "quant_group",
               .fallback = 8,
               .min = 1,
               .doc = "elements per scale; divides head_dim"},
              {.section = "attributes",
               .name = "cache_mode",
               .fallback = 0,
               .allowed = {0, 1},
               .doc = "0 offset (cachestarts[b]), 1 paged"},
              {.section = "attributes",
               .name = "cache_layout",
               .fallback = 0,
               .allowed = {0, 1, 2, 3},
               .doc = "cache axis order (spec's layout table)"},
              {.section = "attributes",
               .name = "page_size",
               .fallback = 128,
               .min = 1,
               .doc = "tokens per page (cache_mode 1)"},
              {.section = "inputs",
               .name = "seqlens",
               .type = ParamType::integers,
               .min = 1,
               .doc = "query tokens per batch"},
              {.section = "inputs",
               .name = "start_pos",
               .type = ParamType::integers,
               .min = 0,
               .doc = "cached tokens per batch before this step"},
              {.section = "inputs",
               .name = "decoding_batches",
               .fallback = 0,
               .min = 0,
               .doc = "the first batches, one token each"},
              {.section = "shapes",
               .name = "attn_mask_rank",
               .fallback = 0,
               .allowed = {0, 2, 3},
               .doc = "attn_mask: 0 none, 2 [rows, cols], 3 [H, rows, cols]"},
              {.section = "shapes",
               .name = "attn_mask_padding",
               .fallback = 0,
               .min = 0,
               .doc = "extra attn_mask columns past sum(kvlens)"},
              {.section = "shapes",
               .name = "cache_gap",
               .fallback = 3,
               .min = 0,
               .doc = "poisoned rows before each sequence (offset mode)"},
              {.section = "shapes",
               .name = "spare_pages",
               .fallback = 2,
               .min = 0,
               .doc = "poisoned unused pages (paged mode)"},
          },
      .tensors =
          {
              {.name = "query",
               .shape = "[rows, num_heads, D]",
               .choices = {DType::f16, DType::f32},
               .dtype_rule = "T1: f16 (default) or f32",
               .range = {{-1, 1}}},
              {.name = "current_key",
               .shape = "[rows, num_kv_heads, D]",
               .choices = {DType::f16, DType::f32},
               .dtype_rule = "T1 (= query)",
               .range = {{-1, 1}}},
              {.name = "current_value",
               .shape = "[rows, num_kv_heads, D]",
               .choices = {DType::f16, DType::f32},
               .dtype_rule = "T1 (= query)",
               .range = {{-1, 1}}},
              {.name = "seqstarts", .shape = "[B + 1]", .dtype_rule = "i64", .doc = "prefix sums of seqlens"},
              {.name = "kvstarts",
               .shape = "[B + 1]",
               .dtype_rule = "i64",
               .doc = "prefix sums of start_pos + seqlens"},
              {.name = "cachestarts",
               .shape = "[B] (offset) or [B, max_pages] (paged)",
               .dtype_rule = "i64",
               .doc = "first cache row, or the page table (-1 padded)"},
              {.name = "start_pos", .shape = "[B]", .dtype_rule = "i64"},
              {.name = "decoding_batches", .shape = "[]", .dtype_rule = "i64"},
              {.name = "max_seqlen", .shape = "[]", .dtype_rule = "i64"},
              {.name = "max_kvlen", .shape = "[]", .dtype_rule = "i64"},
              {.name = "cache",
               .role = Role::inplace,
               .shape = "by cache_layout, last dim D",
               .dtype_rule = "T1, i8 or s4 by quant_bit",
               .doc = "unreferenced rows, layers and pages are NaN / NaN-scaled poison"},
              {.name = "scale",
               .role = Role::inplace,
               .shape = "the cache's, last dim D / quant_group",
               .choices = {DType::f16, DType::f32},
               .dtype_rule = "f16 (default) or f32",
               .present = "quant_bit > 0"},
              {.name = "attn_mask",
               .shape = "[rows, cols] or [num_heads, rows, cols]",
               .dtype_rule = "T1",
               .present = "attn_mask_rank > 0",
               .doc = "additive; one in eight -inf; NaN outside each batch's block"},
              {.name = "attn_output",
               .role = Role::output,
               .shape = "[rows, num_heads, D]",
               .dtype_rule = "T1"},
          },
      // The index tensors are derived from seqlens and start_pos (which files may give).
      .from_files = {"query", "current_key", "current_value", "cache", "scale", "attn_mask"},
      .sizes = {"seqlens", "start_pos", "num_heads", "num_kv_heads", "head_dim", "page_size", "num_layer",
                "attn_mask_padding", "cache_gap", "spare_pages"},
      .faults = with_attention_faults({
          {"quant_truncate",
           "cache codes truncated toward zero (a C cast of x / s) instead of rounded to nearest even", ""},
          {"quant_scale_f32",
           "the scale max|x| / qmax computed and applied in f32 where T1 is f16 (codes from an f32 scale)",
           ""},
          {"int4_nibble_swap", "int4 cache codes stored with the two nibbles of each byte swapped", ""},
          {"causal_diagonal_excluded",
           "causal row i sees keys [0, i + start_pos) instead of [0, i + start_pos]", ""},
          {"causal_top_left",
           "causal band aligned top-left (row i sees [0, i]) ignoring the cached start_pos", ""},
          {"gqa_head_mod",
           "query head h reads kv head h % num_kv_heads instead of h / (num_heads / num_kv_heads)", ""},
          {"key_scale_first_group",
           "every key element dequantized with its row's first group scale (the group index "
           "d / quant_group dropped for K)",
           "issue 36: broken scores passed mhca_decode_4096[quant_bit=4] (fixed in dcbd18c)"},
          {"page_index_stuck",
           "paged cache: every key read from its batch's first page (page index never advanced)", ""},
          {"pv_reads_past_sequence",
           "P.V over a paged batch's last page whole: its rows past the sequence (poison) times weight 0, so "
           "0 * NaN makes the batch's rows NaN (a key of weight 0 inside the sequence may give NaN: not "
           "there)",
           "the zero-weight rule's other side (specs/golden-format.md); flash-attention#1745, vllm#936, "
           "pegainfer#291 (reads past the sequence, hidden by zeroed memory)"},
          {"gqa_group_past_8_reuses_query",
           "GQA in tiles of 8 query heads: member j >= 8 of a kv head's group computed with member j % 8's "
           "query (right only up to a group of 8)",
           "issue 62 (GQA mappings that hold only up to a group of 8; llama.cpp#28124 seen only at GQA 16)"},
          {"page_offset_capped_128",
           "paged cache with page_size > 128: the row within a page taken as (t % page_size) % 128",
           "flashinfer#4347 (wrong results for page sizes above 128)"},
          {"last_page_len_mod",
           "the last page's length computed as kvlen % page_size, 0 when the sequence fills its last page, "
           "so that page is dropped (at page size 1: every sequence loses its last key)",
           "vllm#31282 (last_page_len set wrong at block size 1)"},
          {"kernel_block_size_doubled",
           "the kernel told twice the cache's page size: key t read from table entry t / (2 page_size), row "
           "t "
           "% (2 page_size), running on past the page into the next physical rows",
           "vllm#27547 (the cache manager's block size passed as the kernel's)"},
      }),
      .variants = with_attention_variants({
          {"pmx_cuda_decode", "P in f32, never rounded, the sum + 1e-6 divided out at the end (__fdividef)",
           "OpenPPL/ppl.llm.kernel.cuda@255f3c8 "
           "src/ppl/kernel/llm/cuda/pmx/multi_head_cache_attention/kernel.cu "
           "(SHAREMEM_MHCA and the online-softmax decode)"},
          {"pmx_cuda_split_k",
           "keys in splits of 64 with P in f32, each split's normalized output stored in T1, merged with f32 "
           "weights",
           "OpenPPL/ppl.llm.kernel.cuda@255f3c8 "
           "src/ppl/kernel/llm/cuda/pmx/multi_head_cache_attention/kernel.cu "
           "(split-K decode)"},
          {"pmx_flash_prefill",
           "exp2 with a log2(e) prescale, exp(s - max) rounded to T1 before P @ V, the f32 sum "
           "divided out at the end",
           "OpenPPL/ppl.llm.kernel.cuda@255f3c8 FlashAttention-2 prefill (flash_fwd_kernel.h, softmax.h)"},
      }),
  };
  return sig;
}

MhcaParams parse_mhca_params(Args& c) {
  MhcaParams p;
  p.num_heads = c.integer("num_heads");
  p.head_dim = c.integer("head_dim");
  p.is_causal = c.boolean("is_causal");
  p.is_alibi = c.boolean("is_alibi");
  p.num_kv_heads = c.integer("num_kv_heads");
  p.num_layer = c.integer("num_layer");
  p.layer_idx = c.integer("layer_idx");
  p.quant_bit = c.integer("quant_bit");
  p.quant_group = c.integer("quant_group");
  p.cache_mode = c.integer("cache_mode");
  p.cache_layout = c.integer("cache_layout");
  p.page_size = c.integer("page_size");
  p.seqlens = c.integers("seqlens");
  p.start_pos = c.integers("start_pos");
  p.decoding_batches = c.integer("decoding_batches");
  p.mask_rank = c.integer("attn_mask_rank");
  p.mask_padding = c.integer("attn_mask_padding");
  p.cache_gap = c.integer("cache_gap");
  p.spare_pages = c.integer("spare_pages");
  p.t1 = c.dtype("query", DType::f16);
  c.require_same_dtype("current_key", p.t1, "query");
  c.require_same_dtype("current_value", p.t1, "query");
  p.scale = c.dtype("scale", DType::f16);

  if (p.num_kv_heads == 0) {  // the document's default
    p.num_kv_heads = p.num_heads;
    c.resolve("num_kv_heads", p.num_kv_heads);
  }
  if (p.num_heads % p.num_kv_heads != 0)
    c.fail("num_kv_heads", "num_heads must be divisible by num_kv_heads");
  if (p.layer_idx >= p.num_layer) c.fail("layer_idx", "layer_idx must lie in [0, num_layer)");
  if (p.quant_bit && p.head_dim % p.quant_group != 0)
    c.fail("quant_group", "quant_group must divide head_dim");
  const int64_t B = p.batches();
  if (B < 1) c.fail("seqlens", "seqlens needs at least one batch");
  if (static_cast<int64_t>(p.start_pos.size()) != B)
    c.fail("start_pos", "start_pos needs one entry per batch (" + std::to_string(B) + ")");
  if (p.decoding_batches > B) c.fail("decoding_batches", "decoding_batches must lie in [0, batches]");
  for (int64_t b = 0; b < p.decoding_batches; ++b)
    if (p.seqlens[b] != 1)
      c.fail("seqlens", "decoding batch " + std::to_string(b) + " has seqlen " +
                            std::to_string(p.seqlens[b]) +
                            ": decoding batches hold one query token (specs/multi_head_cache_attention.md)");
  if (p.quant_bit == 0)
    p.cache = p.t1;
  else
    p.cache = p.quant_bit == 8 ? DType::i8 : DType::s4;

  // Prefix sums; kvlen_b = start_pos_b + seqlen_b (the operator's invariant).
  p.seqstarts = {0};
  p.kvstarts = {0};
  for (int64_t b = 0; b < B; ++b) {
    p.seqstarts.push_back(p.seqstarts.back() + p.seqlens[b]);
    p.kvstarts.push_back(p.kvstarts.back() + p.kvlen(b));
  }
  if (p.cache_mode == 0) {
    // Sequences in reverse order with cache_gap unreferenced rows before each, so
    // cachestarts is neither sorted nor dense.
    p.cachestarts.assign(B, 0);
    int64_t row = p.cache_gap;
    for (int64_t b = B - 1; b >= 0; --b) {
      p.cachestarts[b] = row;
      row += p.kvlen(b) + p.cache_gap;
    }
    p.max_t = row;
  } else {
    // Pages shuffled by the case seed; spare pages and the -1 padding column are never read.
    int64_t used = 0, most = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t pages = (p.kvlen(b) + p.page_size - 1) / p.page_size;
      used += pages;
      most = std::max(most, pages);
    }
    const int64_t total = used + p.spare_pages;
    // The page table and the cache it addresses, before either is allocated.
    c.require_memory("start_pos", {total, p.page_size, p.num_layer, 2 * p.num_kv_heads, p.head_dim},
                     inplace_host_bytes_each(p.cache), "the paged cache");
    std::vector<int64_t> order(static_cast<size_t>(total));
    std::iota(order.begin(), order.end(), 0);
    const CounterRng rng(c.seed(), "page_table");
    for (int64_t i = total - 1; i > 0; --i)
      std::swap(order[i], order[rng.integer(static_cast<uint64_t>(i), 0, i)]);
    p.max_pages = most + 1;
    p.cachestarts.assign(static_cast<size_t>(B * p.max_pages), -1);
    int64_t next = 0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < (p.kvlen(b) + p.page_size - 1) / p.page_size; ++k)
        p.cachestarts[b * p.max_pages + k] = order[next++] * p.page_size;
    p.max_t = total * p.page_size;
  }
  return p;
}

}  // namespace kvbench
