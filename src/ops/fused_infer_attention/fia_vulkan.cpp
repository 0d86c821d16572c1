// aclnn.FusedInferAttentionScoreV3 on the shared attention kernel: how the kernel reads K
// and V (its specialization constants), the parameters of shaders/fia_attention.comp, and
// the launch. Semantics: specs/fused_infer_attention_score.md ("Vulkan").
#include "ops/fused_infer_attention/fia_vulkan.hpp"

#include <bit>

#include "core/divide.hpp"
#include "core/error.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/fused_infer_attention/fia_inputs.hpp"
#include "ops/vulkan_io.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

// The elements one K (V) load of the chosen kernel reads (attention_slice_elements): the
// fast paths below read them as whole words or uvec4s, so each slice must hold whole ones.
struct Slices {
  int64_t key = 8, value = 8;
};

// Whether the kernel may read K/V as plain rows of whole uvec4s (specialization constant
// PLAIN_KV of shaders/fia_attention.comp): no antiquant, rope or shared prefix, 16- or
// 32-bit elements, and every slice starting on a 16-byte boundary and holding whole uvec4s,
// so each stride, row and slice is a multiple of 16 bytes' elements.
uint32_t plain_kv(const FiaParams& p, const Strides& ks, const Strides& vs, Slices slices) {
  const int64_t bits = dtype_bits(p.q), per_uvec4 = 128 / bits;
  if (p.quant.on || p.rope || p.has_prefix() || p.nz || bits < 16) return 0;
  for (int64_t x :
       {slices.key, slices.value, p.D, p.Dv, ks.batch, ks.token, ks.head, vs.batch, vs.token, vs.head})
    if (x % per_uvec4 != 0) return 0;
  return 1;  // D and Dv: paged and tensorlist rows start at multiples of them
}

// How the kernel turns K/V codes into values: KV antiquant's modes and scale tensors, or
// full int8 as a per-tensor one whose scales are deqScale1 (K) and deqScale2 (V), so that
// the kernel's K is deqScale1 * k and its V deqScale2 * v.
struct KvCodes {
  bool on = false;
  DType codes = DType::i8;
  int k_mode = 0, v_mode = 0;
  bool per_tensor = false, offset = false;
  DType ks_dtype = DType::f32, vs_dtype = DType::f32;
  int64_t ks_base = 0, vs_base = 0, k_step = 0, v_step = 0;  // see FiaSide
};
KvCodes kv_codes(const FiaParams& p) {
  if (p.full.on) return {.on = true, .per_tensor = true};
  const FiaSide k = fia_side(p, 0), v = fia_side(p, 1);
  return {.on = p.quant.on,
          .codes = p.quant.codes,
          .k_mode = k.mode,
          .v_mode = v.mode,
          .per_tensor = p.quant.per_tensor,
          .offset = p.quant.on && p.quant.offset,
          .ks_dtype = p.antiquant_dtype(k.mode),
          .vs_dtype = p.antiquant_dtype(v.mode),
          .ks_base = k.base,
          .vs_base = v.base,
          .k_step = k.mode == 6 ? 0 : k.step,
          .v_step = v.mode == 6 ? 0 : v.step};
}

// Whether every K/V row of `bits`-bit elements starts on a multiple of `unit` bits: each
// stride does, and D and Dv, of which paged and tensorlist rows start at multiples.
bool code_rows_aligned(const FiaParams& p, const Strides& ks, const Strides& vs, int64_t bits, int64_t unit) {
  for (int64_t x : {p.D, p.Dv, ks.batch, ks.token, ks.head, vs.batch, vs.token, vs.head})
    if (x * bits % unit != 0) return false;
  return true;
}

// How the kernel reads K and V (specialization constant 2 of shaders/fia_attention.comp):
// 1 plain rows (plain_kv), else 0 for float K/V, element by element; 2/3/4/6 int8/int4/FP8
// E4M3FN/HiF8 antiquant codes by whole words when every slice starts on a word and holds whole
// words (the lanes kernel's D / 8 elements at D 16 or 40 do not: its loader would read
// none, or too few, of the slice's codes), i.e. each stride holds whole words, with 16-bit
// per-channel scales at an even element (two a word); else 5, codes element by element.
// MLA's rope takes 0 or 5 only: the lanes kernel's slices are then not consecutive dims.
uint32_t kv_path(const FiaParams& p, const Strides& ks, const Strides& vs, Slices slices) {
  if (plain_kv(p, ks, vs, slices)) return 1;
  const KvCodes c = kv_codes(p);
  if (!c.on) return 0;
  // FP4 (E8M0 scales per group of 32): the general path.
  if (p.rope || p.has_prefix() || p.nz || p.quant.fp4()) return 5;
  const int64_t bits = dtype_bits(c.codes);
  if (!code_rows_aligned(p, ks, vs, bits, 32) || slices.key * bits % 32 != 0 || slices.value * bits % 32 != 0)
    return 5;
  if (c.k_step && (dtype_bits(c.ks_dtype) != 16 || c.ks_base % 2 != 0)) return 5;
  if (c.v_step && (dtype_bits(c.vs_dtype) != 16 || c.vs_base % 2 != 0)) return 5;
  return c.codes == DType::f8e4m3fn ? 4 : c.codes == DType::hifloat8 ? 6 : c.codes == DType::i8 ? 2 : 3;
}

// Whether kv_path's `path` reads codes by whole words (the shader's CODES_KV).
bool word_codes(uint32_t path) { return (path >= 2 && path <= 4) || path == 6; }

// Whether every K/V row of a codes path (`path` = kv_path, 2 to 4 or 6) starts on 16 bytes
// (specialization constant 7): slices of whole uvec4s are then read 16 bytes a load, which
// lavapipe pays per load.
bool codes_rows_in_uvec4s(const FiaParams& p, uint32_t path, const Strides& ks, const Strides& vs) {
  return word_codes(path) && code_rows_aligned(p, ks, vs, dtype_bits(kv_codes(p).codes), 128);
}

}  // namespace

double fia_run_vulkan(const FiaParams& p, const Args& args, Runtime& rt, TensorSet& io) {
  // The kernel's block-table lookup divides a key's position by blockSize with
  // shaders/divide.glsl, exact below 2^32 / blockSize (8 Mi tokens per batch at 512).
  if (p.paged() && !division_magic_covers(static_cast<uint64_t>(p.max_blocks * p.block_size),
                                          static_cast<uint32_t>(p.block_size)))
    throw SkipCase("page attention over " + std::to_string(p.max_blocks) + " blocks of " +
                   std::to_string(p.block_size) +
                   " tokens: the Vulkan kernel's block lookup covers fewer than 2^32 / " +
                   std::to_string(p.block_size) + " tokens");
  // A key handle's slot word packs (block, row) as block << block_shift | row.
  const int block_shift = p.paged() ? std::bit_width(static_cast<uint64_t>(p.block_size - 1)) : 0;
  if (p.paged() && (static_cast<uint64_t>(p.num_blocks - 1) >> (32 - block_shift)) != 0)
    throw SkipCase("page attention over a cache of " + std::to_string(p.num_blocks) + " blocks of " +
                   std::to_string(p.block_size) + " tokens: the Vulkan kernel's key handle holds at most 2^" +
                   std::to_string(32 - block_shift) + " blocks");
  // Per batch: b, S1b, S2b, first query token, first key token, band lo, hi, and with a
  // tensorlist the tokens of the elements before key.b (where it starts in the buffer of
  // all of them).
  std::vector<int32_t> batches;
  int64_t list_tokens = 0;
  for (int64_t b = 0; b < p.B; ++b) {
    for (int64_t x :
         {b, p.s1b[b], p.keys(b), p.q_start[b], p.kv_start[b], p.band[b].lo, p.band[b].hi, list_tokens})
      batches.push_back(static_cast<int32_t>(x));
    list_tokens += p.tensorlist ? p.s2b[b] : 0;
  }
  AttentionShape shape{.num_heads = p.N, .num_kv_heads = p.Nkv};
  for (int64_t b = 0; b < p.B; ++b) shape.kv_len.push_back(p.keys(b));
  for (int64_t b = 0; b < p.B; ++b)
    shape.q_rows.push_back(p.tnd ? p.s1b[b] : p.S1);  // padding rows leave as zeros
  shape.out_vector = [&](int64_t b, int64_t i, int64_t h) { return p.out_vector(b, i, h); };
  if (p.lse) shape.lse_index = [&](int64_t b, int64_t i, int64_t h) { return p.lse_index(b, i, h); };
  Batch batch(rt);
  DeviceTensors t(batch, io, args.signature());
  Buffer* batch_table = batch.buffer_with(batches);
  KernelBuffers buffers = t.bindings();
  buffers["batches"] = batch_table;
  if (p.tensorlist)  // key.0, key.1, ... one after the other in one buffer (likewise value)
    for (const std::string side : {"key", "value"}) {
      std::vector<uint8_t> all;
      for (int64_t b = 0; b < p.B; ++b) {
        const auto& bytes = io.at(side + "." + std::to_string(b)).bytes();
        all.insert(all.end(), bytes.begin(), bytes.end());
      }
      buffers[side] = batch.buffer_with(all);
    }
  if (p.full.on) {  // K and V "antiquantized" per tensor by deqScale1 and deqScale2
    buffers["keyAntiquantScale"] = t.at("deqScale1");
    buffers["valueAntiquantScale"] = t.at("deqScale2");
  }
  const KvCodes codes = kv_codes(p);
  if (p.quant.combined) {  // both sides read the one combined tensor, the value's half at its base
    buffers["keyAntiquantScale"] = buffers["valueAntiquantScale"] = t.at("antiquantScale");
    if (p.quant.offset)
      buffers["keyAntiquantOffset"] = buffers["valueAntiquantOffset"] = t.at("antiquantOffset");
  }
  // K/V strides (a tensorlist's: the kernel takes S2b from the batch for BNSD's head
  // stride; these, with S 1, serve kv_path's alignment test only).
  const auto kv_strides = [&](int64_t dim) {
    return p.paged() ? Strides{} : p.tensorlist ? p.list_strides(0, dim) : p.kv_strides(dim);
  };
  const Strides qs = p.query_strides(), ks = kv_strides(p.D), vs = kv_strides(p.Dv);
  const Strides pses = p.pse_strides();
  const Strides qrs = p.query_strides(p.rope), krs = p.paged() ? Strides{} : p.kv_strides(p.rope);
  const uint32_t block_magic = p.paged() ? division_magic(static_cast<uint32_t>(p.block_size)) : 0u;
  const KernelParams params{{"num_heads", p.N},
                            {"num_kv_heads", p.Nkv},
                            {"dtype", static_cast<uint32_t>(p.q)},
                            {"scale", p.scale},
                            {"q_sb", qs.batch},
                            {"q_st", qs.token},
                            {"q_sh", qs.head},
                            {"k_sb", ks.batch},
                            {"k_st", ks.token},
                            {"k_sh", ks.head},
                            {"v_sb", vs.batch},
                            {"v_st", vs.token},
                            {"v_sh", vs.head},
                            {"paged", p.paged()},
                            {"block_size", p.block_size},
                            {"block_magic", block_magic},
                            {"block_shift", block_shift},
                            {"max_blocks", p.max_blocks},
                            {"bnnbsd", p.bnnbsd},
                            {"kv_list", p.tensorlist ? (p.in == FiaOrder::BNSD ? 2 : 1) : 0},
                            {"nz", p.nz},
                            {"has_mask", p.mask_applies()},
                            {"ifa", p.ifa()},
                            {"mask_sb", p.has_mask() ? p.mask_batch_stride() : 0},
                            {"mask_row", p.has_mask() ? p.mask_row_stride() : 0},
                            {"has_pse", p.pse != "none"},
                            {"pse_sb", pses.batch},
                            {"pse_sh", pses.head},
                            {"pse_row", pses.token},
                            {"kv_quant", codes.on},
                            {"kv_dtype", static_cast<uint32_t>(codes.on ? codes.codes : p.q)},
                            {"k_mode", codes.k_mode},
                            {"v_mode", codes.v_mode},
                            {"per_tensor", codes.per_tensor},
                            {"has_offset", codes.offset},
                            {"ks_dtype", static_cast<uint32_t>(codes.ks_dtype)},
                            {"vs_dtype", static_cast<uint32_t>(codes.vs_dtype)},
                            {"kv_tokens", p.kv_tokens()},
                            {"ks_base", codes.ks_base},
                            {"vs_base", codes.vs_base},
                            {"pse_dtype", static_cast<uint32_t>(p.pse_dtype())},
                            {"quant_scale1", p.full.on ? io.at("quantScale1").get(0) : 0.0},
                            {"q_rows", p.tnd ? 0 : p.S1},
                            {"prefix_len", p.prefix_len},
                            {"p_st", p.has_prefix() ? p.prefix_strides(p.D).token : 0},
                            {"p_sh", p.has_prefix() ? p.prefix_strides(p.D).head : 0},
                            {"pv_st", p.has_prefix() ? p.prefix_strides(p.Dv).token : 0},
                            {"pv_sh", p.has_prefix() ? p.prefix_strides(p.Dv).head : 0},
                            {"qr_sb", qrs.batch},
                            {"qr_st", qrs.token},
                            {"qr_sh", qrs.head},
                            {"kr_sb", krs.batch},
                            {"kr_st", krs.token},
                            {"kr_sh", krs.head}};
  const AttentionKernel kernel = attention_kernel_for(rt.info(), fia_heads(p), shape);
  const Slices slices{.key = attention_slice_elements(kernel, p.D + p.rope),
                      .value = attention_slice_elements(kernel, p.Dv)};
  const uint32_t path = kv_path(p, ks, vs, slices);
  const bool codes_uvec4 = codes_rows_in_uvec4s(p, path, ks, vs);  // the shader's CODES_UVEC4
  // The shader's TEXELS, set only where it reads through a view (the block table, plain rows,
  // codes by uvec4s): elsewhere it would change nothing but the pipeline's key, and cost a
  // second compile of the same code where the storage-load path is tested.
  const bool reads_texels = p.paged() || path == 1 || codes_uvec4;
  const bool texels = reads_texels && batch.runtime().texels_cover(buffers, {"key", "value", "blockTable"});
  run_attention(
      batch, shape,
      {.kernel = Kernel("fia_attention",
                        {{"D", static_cast<uint32_t>(p.D + p.rope)},
                         {"FIA_DV", static_cast<uint32_t>(p.Dv)},
                         {"KV_PATH", path},
                         {"DQK", static_cast<uint32_t>(p.D)},
                         // Read by the word codes paths only: elsewhere they would change
                         // nothing but the key, and cost a second compile of the same code.
                         {"K_PER_CHANNEL", static_cast<uint32_t>(word_codes(path) && codes.k_step)},
                         {"V_PER_CHANNEL", static_cast<uint32_t>(word_codes(path) && codes.v_step)},
                         {"HAS_OFFSET", static_cast<uint32_t>(word_codes(path) && codes.offset)},
                         {"CODES_UVEC4", static_cast<uint32_t>(codes_uvec4)},
                         {"TEXELS", static_cast<uint32_t>(texels)},
                         {"SCORE_LOADS", static_cast<uint32_t>(p.mask_applies() || p.pse != "none")}}),
       .buffers = buffers,
       .params = params,
       .out = t.at("attentionOut"),
       .lse = p.lse ? t.at("softmaxLse") : nullptr,
       .post_quant = {.scale = p.post.on ? t.at("quantScale2") : nullptr,
                      .offset = p.post.on && p.post.offset ? t.at("quantOffset2") : nullptr,
                      .per_channel = p.post.per_channel,
                      .dtype = p.post.dtype},
       .out_dtype = p.out_dtype(),
       .head_dim = p.Dv,
       .empty = EmptyRow::zeros,
       .heads = fia_heads(p)});
  t.download(io);
  const double ms = batch.submit();
  // Without softmaxLseFlag the operator returns a [1] zero tensor: nothing to compute.
  if (!p.lse) io.at("softmaxLse").set(0, 0.0);
  return ms;
}

}  // namespace kvbench
