// pmx.dynamic_batching.MultiHeadCacheAttention: store current K/V of a ragged batch in
// the (offset or paged, optionally int8/int4) cache, then attention of every query row
// over its batch's dequantized K/V. Formulas and decisions: specs/multi_head_cache_attention.md.
#include "ops/multi_head_cache_attention/multi_head_cache_attention.hpp"

#include <array>
#include <cmath>
#include <limits>

#include "core/divide.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "ops/attention/attention_golden.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/attention/paged_faults.hpp"
#include "ops/multi_head_cache_attention/mhca_params.hpp"
#include "ops/vulkan_io.hpp"
#include "ref/attention.hpp"
#include "ref/ppl_cache_store.hpp"
#include "ref/quant.hpp"
#include "vk/runtime.hpp"
#include "core/float_format.hpp"

namespace kvbench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class MhcaCase final : public OpCase {
 public:
  MhcaCase(Args a, MhcaParams p) : OpCase(std::move(a)), p_(std::move(p)) {}

  std::string describe() const override {
    std::string s = "B=" + std::to_string(p_.batches()) + " rows=" + std::to_string(p_.total_rows()) +
                    " kv=" + std::to_string(p_.total_kv()) + " H=" + std::to_string(p_.num_heads) + "/" +
                    std::to_string(p_.num_kv_heads) + " D=" + std::to_string(p_.head_dim) +
                    " quant_bit=" + std::to_string(p_.quant_bit) +
                    " cache_mode=" + std::to_string(p_.cache_mode) +
                    " layout=" + std::to_string(p_.cache_layout) + " T1=" + std::string(dtype_name(p_.t1));
    if (p_.cache_mode == 1) s += " page_size=" + std::to_string(p_.page_size);
    if (p_.is_causal) s += " causal";
    if (p_.is_alibi) s += " alibi";
    if (p_.mask_rank) s += " mask" + std::to_string(p_.mask_rank) + "d";
    return s;
  }

  // Which (row T, layer) pairs hold a referenced token: everything else is poison.
  std::vector<uint8_t> referenced_rows() const {
    std::vector<uint8_t> r(static_cast<size_t>(p_.max_t), 0);
    for (int64_t b = 0; b < p_.batches(); ++b)
      for (int64_t t = 0; t < p_.kvlen(b); ++t) r[p_.cache_row(b, t)] = 1;
    return r;
  }

  std::vector<TensorSpec> tensor_specs() const override {
    const int64_t rows = p_.total_rows(), H = p_.num_heads, Hk = p_.num_kv_heads, D = p_.head_dim,
                  B = p_.batches();
    std::vector<TensorSpec> s{
        {"query", p_.t1, {rows, H, D}},
        {"current_key", p_.t1, {rows, Hk, D}},
        {"current_value", p_.t1, {rows, Hk, D}},
        {"seqstarts", DType::i64, {B + 1}},
        {"kvstarts", DType::i64, {B + 1}},
        {"cachestarts", DType::i64, p_.cache_mode == 0 ? Shape{B} : Shape{B, p_.max_pages}},
        {"start_pos", DType::i64, {B}},
        {"decoding_batches", DType::i64, {}},
        {"max_seqlen", DType::i64, {}},
        {"max_kvlen", DType::i64, {}},
        {"cache", p_.cache, p_.cache_shape(D)},
    };
    if (p_.quant_bit) s.push_back({"scale", p_.scale, p_.cache_shape(p_.scale_groups())});
    if (p_.mask_rank)
      s.push_back({"attn_mask", p_.t1,
                   p_.mask_rank == 3 ? Shape{H, rows, p_.mask_cols()} : Shape{rows, p_.mask_cols()}});
    s.push_back({"attn_output", p_.t1, {rows, H, D}});
    return s;
  }

  // The rows of the current tokens, key and value: head_dim codes and their scales each.
  long double written_elements(const TensorSpec& spec) const override {
    const long double rows = 2.0L * static_cast<long double>(p_.total_rows()) * p_.num_kv_heads;
    return rows * static_cast<long double>(spec.name == "scale" ? p_.scale_groups() : p_.head_dim);
  }

  void fill(Tensor& t) const override {
    const std::string& name = t.name();
    int64_t max_seqlen = 0, max_kvlen = 0;
    for (int64_t b = 0; b < p_.batches(); ++b) {
      max_seqlen = std::max(max_seqlen, p_.seqlens[b]);
      max_kvlen = std::max(max_kvlen, p_.kvlen(b));
    }
    if (name == "seqstarts")
      fill_values(t, p_.seqstarts);
    else if (name == "kvstarts")
      fill_values(t, p_.kvstarts);
    else if (name == "cachestarts")
      fill_values(t, p_.cachestarts);
    else if (name == "start_pos")
      fill_values(t, p_.start_pos);
    else if (name == "decoding_batches")
      fill_values(t, {p_.decoding_batches});
    else if (name == "max_seqlen")
      fill_values(t, {max_seqlen});
    else if (name == "max_kvlen")
      fill_values(t, {max_kvlen});
    else if (name == "cache")
      fill_cache(t);
    else if (name == "scale")
      fill_scale(t);
    else if (name == "attn_mask")
      fill_mask(t);
    else
      OpCase::fill(t);
  }

  // The cache: referenced rows of layer layer_idx hold valid random contents (float caches:
  // uniform over current_key's or current_value's range, as the tokens being stored); every
  // other row, layer, page and gap is poison (NaN values, or NaN scales for int caches),
  // so a kernel that reads one produces NaN.
  void fill_cache(Tensor& cache) const {
    const auto referenced = referenced_rows();
    const CounterRng crng(args().seed(), "cache");
    const int64_t qmax = p_.quant_bit == 8 ? 127 : 7, D = p_.head_dim;
    fill_with(cache, [&](size_t i) {
      return p_.quant_bit ? static_cast<double>(crng.integer(i, -qmax, qmax)) : kNaN;
    });
    if (p_.quant_bit) return;
    const std::array<std::pair<double, double>, 2> range{args().range("current_key"),
                                                         args().range("current_value")};
    for (int64_t T = 0; T < p_.max_t; ++T)
      if (referenced[T])
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t h = 0; h < p_.num_kv_heads; ++h) {
            const size_t row = p_.row_offset(T, c, h, D);
            const auto [lo, hi] = range[static_cast<size_t>(c)];
            for (int64_t d = 0; d < D; ++d) cache.set(row + d, crng.uniform(row + d, lo, hi));
          }
  }

  void fill_scale(Tensor& scale) const {
    const auto referenced = referenced_rows();
    fill_with(scale, [](size_t) { return kNaN; });
    const CounterRng srng(args().seed(), "scale");
    // Scales in [1/1024, 1/64) for int8, widened by 127/7 for int4, so that dequantized
    // values reach about 2 at either width. Int4 codes over int8's scales stay below 0.11:
    // a decode's output is then near 2e-3, inside atol whatever its scores.
    const double widen = p_.quant_bit == 4 ? 127.0 / 7.0 : 1.0;
    for (int64_t T = 0; T < p_.max_t; ++T)
      if (referenced[T])
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t h = 0; h < p_.num_kv_heads; ++h)
            for (int64_t g = 0; g < p_.scale_groups(); ++g) {
              const size_t si = p_.row_offset(T, c, h, p_.scale_groups()) + g;
              scale.set(si, srng.uniform(si, 1.0 / 1024, 1.0 / 64) * widen);
            }
  }

  // Additive mask: inside each batch's block random values in [-1, 1) with one in eight
  // -inf (never the row's last visible key, so no row is fully masked); outside the blocks
  // and in the padding columns NaN, which a kernel must never read.
  void fill_mask(Tensor& m) const {
    const int64_t rows = p_.total_rows(), cols = p_.mask_cols();
    for (size_t i = 0; i < m.numel(); ++i) m.set(i, kNaN);
    const CounterRng rng(args().seed(), "attn_mask");
    const int64_t heads = p_.mask_rank == 3 ? p_.num_heads : 1;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t b = 0; b < p_.batches(); ++b)
        for (int64_t i = 0; i < p_.seqlens[b]; ++i)
          for (int64_t t = 0; t < p_.kvlen(b); ++t) {
            const size_t idx =
                static_cast<size_t>((h * rows + p_.seqstarts[b] + i) * cols + p_.kvstarts[b] + t);
            const bool keep = t == std::min(p_.kvlen(b) - 1, i + p_.start_pos[b]);
            m.set(idx, (!keep && rng.integer(idx, 0, 7) == 0) ? -kInf : rng.uniform(idx, -1, 1));
          }
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    const int64_t D = p_.head_dim, Hk = p_.num_kv_heads, H = p_.num_heads, G = p_.group_ratio();
    const int64_t ng = p_.scale_groups();
    const bool quant = p_.quant_bit != 0;
    Expected cache = Expected::unchanged(in.at("cache"));
    Expected scale;
    if (quant) scale = Expected::unchanged(in.at("scale"));

    // 1. Store, exactly as pmx.KeyValueCache's quantizer (specs/key_value_cache.md).
    std::vector<PplRow> stored;
    for (int64_t c = 0; c < 2; ++c) {
      const Tensor& cur = in.at(c == 0 ? "current_key" : "current_value");
      for (int64_t b = 0; b < p_.batches(); ++b)
        for (int64_t s = 0; s < p_.seqlens[b]; ++s)
          for (int64_t h = 0; h < Hk; ++h) {
            const int64_t T = p_.cache_row(b, p_.start_pos[b] + s);
            stored.push_back({&cur, cur.offset({p_.seqstarts[b] + s, h, 0}), p_.row_offset(T, c, h, D),
                              quant ? p_.row_offset(T, c, h, ng) : 0});
          }
    }
    store_ppl_rows(
        stored, static_cast<size_t>(D), p_.quant_bit, p_.quant_group, p_.t1, p_.scale, cache, scale,
        args().threads(),
        {.quant = {.truncate = fault_is("quant_truncate"), .scale_f32 = fault_is("quant_scale_f32")},
         .swap_nibbles = fault_is("int4_nibble_swap")});
    // Query head j of kv head hk's group (the fault gqa_head_mod interleaves the groups).
    const bool head_mod = fault_is("gqa_head_mod");
    const auto head = [&](int64_t hk, int64_t j) { return head_mod ? j * Hk + hk : hk * G + j; };
    const PagedRead read = p_.cache_mode == 1 ? paged_read() : PagedRead::right;
    // gqa_group_past_8_reuses_query: member j >= 8 of a group computed with member j % 8's query.
    const int64_t query_members = fault_is("gqa_group_past_8_reuses_query") ? 8 : G;
    const bool first_group = fault_is("key_scale_first_group");
    cache.finish();
    scale.finish();

    // 2. Attention over the dequantized cache, following the PMX torch reference (or, with a
    // variant, as that permitted implementation computes it).
    const std::optional<PrecisionSteps> variant_steps = steps();
    const std::vector<double> slopes = alibi_slopes(H);
    const Tensor& query = in.at("query");
    std::vector<double> out(static_cast<size_t>(p_.total_rows() * H * D),
                            0.0);                // exact, before the rounding to T1
    std::vector<uint16_t> bound(out.size(), 0);  // and how far a permitted implementation may be (bf16)
    NanPermits nan_ok;
    const Tensor* mask = p_.mask_rank ? &in.at("attn_mask") : nullptr;
    for (int64_t b = 0; b < p_.batches(); ++b) {
      const int64_t kvlen = p_.kvlen(b), seqlen = p_.seqlens[b], offset = kvlen - seqlen;
      // Dequantized K (c 0) or V rows of kv head hk in T1: T1(S(q * s)) (PMX's dequant then
      // type_as), made as attend() packs them.
      const auto kv_rows = [&, b](int64_t c, int64_t hk) -> RowSource {
        return [&, b, c, hk](int64_t t, double* dst, int64_t step) {
          // attend() may call this from several threads: the row is read into buffers of
          // the calling thread.
          thread_local std::vector<double> row, s;
          row.resize(static_cast<size_t>(D));
          s.resize(static_cast<size_t>(ng));
          const int64_t T = cache_row_read(b, t, read);
          if (T < 0 || T >= p_.max_t) {  // a faulty kernel's read past the cache: garbage
            for (int64_t d = 0; d < D; ++d) dst[d * step] = kNaN;
            return;
          }
          cache.value().get_range(p_.row_offset(T, c, hk, D), row.size(), row.data());
          if (quant) scale.value().get_range(p_.row_offset(T, c, hk, ng), s.size(), s.data());
          for (int64_t d = 0; d < D; ++d)
            dst[d * step] = quant ? dequant_ppl(row[d], s[first_group && c == 0 ? 0 : d / p_.quant_group],
                                                p_.scale, p_.t1)
                                  : row[d];
        };
      };
      const bool causal = p_.is_causal && seqlen > 1 && b >= p_.decoding_batches;
      const AttentionBlock block{.dk = D,
                                 .dv = D,
                                 .scale = 1.0 / std::sqrt(static_cast<double>(D)),
                                 .round_p = p_.t1,  // P is cast to V's dtype (T1) before P @ V, as PMX does
                                 .empty = EmptyRow::nan,
                                 .fault = attention_fault(fault()),
                                 .permitted = permitted(),
                                 .steps = variant_steps ? &*variant_steps : nullptr,
                                 .threads = args().threads()};
      const int64_t diagonal = fault_is("causal_diagonal_excluded") ? 0 : 1;
      const int64_t causal_offset = fault_is("causal_top_left") ? 0 : offset;
      // last_page_len_mod: the last page's length taken as kvlen % page_size.
      const int64_t seen = p_.cache_mode == 1 && fault_is("last_page_len_mod")
                               ? keys_last_page_mod(kvlen, p_.page_size)
                               : kvlen;
      for (int64_t hk = 0; hk < Hk; ++hk) {
        // Rows (i, h) of the kv head's G query heads, position-major: a group of rows
        // shares its causal key range. Causal rows see keys [0, i + offset].
        std::vector<double> q(static_cast<size_t>(seqlen * G * D));
        std::vector<QueryRow> rows;
        for (int64_t i = 0; i < seqlen; ++i)
          for (int64_t j = 0; j < G; ++j) {
            const int64_t n = p_.seqstarts[b] + i, h = head(hk, j);
            double* qr = &q[rows.size() * D];
            query.get_range(query.offset({n, head(hk, j % query_members), 0}), static_cast<size_t>(D), qr);
            const auto at = static_cast<size_t>((n * H + h) * D);
            rows.push_back(
                {.q = qr,
                 .begin = 0,
                 .end = std::min(seen, causal ? std::min(kvlen, i + causal_offset + diagonal) : kvlen),
                 .out = &out[at],
                 .bound = &bound[at],
                 .nan_ok = &nan_ok,
                 .out_index = static_cast<int64_t>(at)});
          }
        AttentionBlock a = block;
        if (p_.is_alibi || mask)
          a.bias = [&](int64_t r, int64_t begin, int64_t end, double* s) {
            const int64_t i = r / G, h = head(hk, r % G), n = p_.seqstarts[b] + i;
            for (int64_t t = begin; t < end; ++t) {
              bool has_add = false;
              double add = 0;
              if (p_.is_alibi) {
                // PMX's ALiBi mask, built in T1: -inf past the query's position, else
                // T1(T1(slope) * T1(distance)); added to attn_mask in T1.
                const double distance = static_cast<double>(t - offset - i);
                add = distance > 0 ? -kInf
                                   : round_to(p_.t1, round_to(p_.t1, slopes[h]) * round_to(p_.t1, distance));
                has_add = true;
              }
              if (mask) {
                const int64_t mrow = p_.mask_rank == 3 ? h * p_.total_rows() + n : n;
                const double mv = mask->get(static_cast<size_t>(mrow * p_.mask_cols() + p_.kvstarts[b] + t));
                add = has_add ? round_to(p_.t1, add + mv) : mv;
              }
              s[t - begin] += add;
            }
            return 0.0;  // the bias's roundings are PermittedDeltas::s
          };
        attend(a, rows, kv_rows(0, hk), kv_rows(1, hk), nullptr);
        if (fault_is("pv_reads_past_sequence") && p_.cache_mode == 1)
          past_sequence_nan(rows, kv_rows(1, hk), D, kvlen,
                            (kvlen + p_.page_size - 1) / p_.page_size * p_.page_size);
      }
    }
    Expected output = Expected::rounded(in.at("attn_output"), std::move(out));
    set_attention_bound(output, p_.t1, std::move(bound), nan_ok);
    std::vector<Expected> result = expected_list(std::move(output), cache);
    if (quant) result.push_back(std::move(scale));
    return result;
  }

  // The paging fault's read (ops/attention/paged_faults.hpp), PagedRead::right for the golden.
  PagedRead paged_read() const {
    if (fault_is("page_index_stuck")) return PagedRead::index_stuck;
    if (fault_is("page_offset_capped_128")) return PagedRead::offset_capped_128;
    if (fault_is("kernel_block_size_doubled")) return PagedRead::size_doubled;
    return PagedRead::right;
  }
  // Cache row of key t of batch b as `read` finds it: a row past a page runs on into the next
  // physical rows; -1 where the page table has no page.
  int64_t cache_row_read(int64_t b, int64_t t, PagedRead read) const {
    if (read == PagedRead::right) return p_.cache_row(b, t);
    const PageSlot s = paged_slot(t, p_.page_size, read);
    const int64_t page = p_.cachestarts[b * p_.max_pages + s.entry];
    return page < 0 ? -1 : page + s.row;
  }

  // The precision steps of the case's variant (none for the golden).
  std::optional<PrecisionSteps> steps() const {
    using P = PrecisionSteps::P;
    if (variant().empty()) return std::nullopt;
    if (auto shared = attention_steps(variant(), p_.t1)) return shared;
    if (variant_is("pmx_cuda_decode")) return PrecisionSteps{.p = P::unrounded, .sum_epsilon = 1e-6};
    if (variant_is("pmx_cuda_split_k"))
      return PrecisionSteps{.p = P::unrounded, .split = 64, .partial_dtype = p_.t1};
    if (variant_is("pmx_flash_prefill"))
      return PrecisionSteps{.p = P::unnormalized, .p_dtype = p_.t1, .exp2 = true};
    throw std::logic_error("pmx.dynamic_batching.MultiHeadCacheAttention has no variant " + variant());
  }

  // How far a permitted implementation's V~, P and scores may lie from the golden's
  // (specs/multi_head_cache_attention.md "Tolerance: the bound"). K~ and V~ are T1(S(q * s))
  // in PMX's CUDA kernels as in the golden; they keep P in f32 or round it unnormalized (the
  // golden rounds it to T1 after normalizing), divide by sum + 1e-6, store a split's
  // normalized partial output in T1, and add the mask in f32 (times 1 / scale in prefill).
  PermittedDeltas permitted() const {
    const double u = unit_roundoff(p_.t1), sub = subnormal_half_spacing(p_.t1);
    return {.k = 0, .v = u, .v_abs = sub, .p = 2 * u + 1e-6, .p_abs = 2 * sub, .s = u + 0x1p-22};
  }

  // specs/multi_head_cache_attention.md "Tolerance policy".
  Tolerance default_tolerance(const std::string& output) const override {
    if (output != "attn_output") return {};
    if (p_.t1 == DType::f16) return {.atol = 1e-3, .rtol = 1.0 / 1024};
    return {.atol = 2e-5, .rtol = 1e-4};
  }

  // The cpu attention kernel splits head_dim over 8 lanes in whole 32-bit words: it fits
  // when head_dim * cache bits is a multiple of 256 (the gpu kernel's slices of 8 elements
  // are whole words at any head_dim that is a multiple of 8).
  AttentionHeads heads() const {
    return {.key_dim = p_.head_dim,
            .value_dim = p_.head_dim,
            .lanes_fit = (p_.head_dim * dtype_bits(p_.cache)) % 256 == 0};
  }

  void check_device(const DeviceInfo& dev) const override { check_attention_device(dev, heads()); }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    const int64_t bits = dtype_bits(p_.cache);
    AttentionShape shape{.num_heads = p_.num_heads, .num_kv_heads = p_.num_kv_heads};
    for (int64_t b = 0; b < p_.batches(); ++b) {
      shape.q_rows.push_back(p_.seqlens[b]);
      shape.kv_len.push_back(p_.kvlen(b));
    }
    shape.out_vector = [&](int64_t b, int64_t i, int64_t h) {
      return (p_.seqstarts[b] + i) * p_.num_heads + h;
    };
    Batch batch(rt);
    DeviceTensors t(batch, io, args().signature());
    std::vector<float> slopes_t1;
    for (double s : alibi_slopes(p_.num_heads)) slopes_t1.push_back(static_cast<float>(round_to(p_.t1, s)));
    Buffer* slopes = batch.buffer_with(slopes_t1);
    KernelBuffers buffers = t.bindings();
    buffers["slopes"] = slopes;
    // divide.glsl's multiplier for the quant group (the lanes kernel's scale index)
    const uint32_t qg_magic = p_.quant_bit ? division_magic(static_cast<uint32_t>(p_.quant_group)) : 0;
    const KernelParams params{{"num_heads", p_.num_heads},
                              {"num_kv_heads", p_.num_kv_heads},
                              {"head_dim", p_.head_dim},
                              {"quant_bit", p_.quant_bit},
                              {"quant_group", p_.quant_group},
                              {"cache_mode", p_.cache_mode},
                              {"cache_layout", p_.cache_layout},
                              {"page_size", p_.page_size},
                              {"num_layer", p_.num_layer},
                              {"layer_idx", p_.layer_idx},
                              {"max_t", p_.max_t},
                              {"max_pages", p_.max_pages},
                              {"t1_dtype", static_cast<uint32_t>(p_.t1)},
                              {"scale_dtype", static_cast<uint32_t>(p_.scale)},
                              {"cache_dtype", static_cast<uint32_t>(p_.cache)},
                              {"is_causal", p_.is_causal},
                              {"is_alibi", p_.is_alibi},
                              {"decoding_batches", p_.decoding_batches},
                              {"mask_rank", p_.mask_rank},
                              {"mask_cols", p_.mask_cols()},
                              {"total_rows", p_.total_rows()},
                              {"batches", p_.batches()},
                              {"scale_groups", p_.scale_groups()},
                              {"qg_magic", qg_magic}};
    KernelParams store = params;
    store.emplace("num_items", 0);  // the store kernel shares the Params block; it plans no items
    // One invocation per word of each (token, kv head, k/v) row of the cache and of the scale,
    // one word more per row for a row that starts inside a word (shaders/mhca_store.comp).
    const auto words = [](int64_t n, int64_t bits) { return (n * bits + 31) / 32 + 1; };
    const int64_t per_row = words(p_.head_dim, dtype_bits(p_.cache)) +
                            (p_.quant_bit ? words(p_.scale_groups(), dtype_bits(p_.scale)) : 0);
    batch.dispatch_invocations("mhca_store", buffers, store,
                               static_cast<uint64_t>(p_.total_rows() * p_.num_kv_heads * 2 * per_row));
    // head_dim, the cache's bits, quant_group, whether scores get ALiBi or a mask, whether
    // the per-key loads go through texel views and the page size (0: offset mode) are
    // specialization constants (see the shader).
    const bool score_adds = p_.is_alibi || p_.mask_rank != 0;
    const bool texels = rt.texels_cover(buffers, {"cache", "scale", "cachestarts"});
    run_attention(batch, shape,
                  {.kernel = Kernel("mhca_attention",
                                    {{"D", static_cast<uint32_t>(p_.head_dim)},
                                     {"CACHE_BITS", static_cast<uint32_t>(bits)},
                                     {"QG", static_cast<uint32_t>(p_.quant_bit ? p_.quant_group : 1)},
                                     {"SCORE_ADDS", static_cast<uint32_t>(score_adds)},
                                     {"SCALE_F16", static_cast<uint32_t>(p_.scale == DType::f16)},
                                     {"TEXELS", static_cast<uint32_t>(texels)},
                                     {"PAGE_SIZE", static_cast<uint32_t>(p_.cache_mode ? p_.page_size : 0)}}),
                   .buffers = buffers,
                   .params = params,
                   .out = t.at("attn_output"),
                   .out_dtype = p_.t1,
                   .head_dim = p_.head_dim,
                   .empty = EmptyRow::nan,
                   .heads = heads(),
                   .decode_f16 = p_.quant_bit != 0 && p_.scale == DType::f16,
                   .lanes_constants = lanes_constants});
    t.download(io);
    return batch.submit();
  }

  // The lanes kernel reads a quant group that is a multiple of a lane's D / LANES dims at
  // run time (QG = those dims: one scale per lane, which one from quant_group): fewer
  // pipelines for lavapipe to compile, which it does at their first use (the default
  // suite's 45 MHCA attention pipelines are 33).
  static void lanes_constants(std::map<std::string, uint32_t>& c, uint32_t lanes) {
    const uint32_t dims = c.at("D") / lanes;
    if (c.at("QG") > dims && c.at("QG") % dims == 0) c["QG"] = dims;
  }

  // K/V (and scales) of every referenced row read once per kv head, query read, output
  // written, and the new rows' inputs read and cache rows written.
  // Keys each query row sees: the whole cache, or up to its own position when causal.
  double flops() const override {
    double pairs = 0;
    for (int64_t b = 0; b < p_.batches(); ++b) {
      const bool causal = p_.is_causal && p_.seqlens[b] > 1 && b >= p_.decoding_batches;
      for (int64_t i = 0; i < p_.seqlens[b]; ++i)
        pairs += static_cast<double>(causal ? p_.start_pos[b] + i + 1 : p_.kvlen(b));
    }
    return attention_flops(pairs * static_cast<double>(p_.num_heads), p_.head_dim, p_.head_dim);
  }

  double traffic_bytes(const TensorSet& io) const override {
    const double D = static_cast<double>(p_.head_dim), Hk = static_cast<double>(p_.num_kv_heads);
    const double cache_row =
        D * dtype_bits(p_.cache) / 8 + (p_.quant_bit ? p_.scale_groups() * dtype_bits(p_.scale) / 8.0 : 0);
    const double t1 = dtype_bits(p_.t1) / 8.0;
    const double read_kv = static_cast<double>(p_.total_kv()) * Hk * 2 * cache_row;
    const double qo = 2 * static_cast<double>(p_.total_rows()) * p_.num_heads * D * t1;
    const double store = static_cast<double>(p_.total_rows()) * Hk * 2 * (D * t1 + cache_row);
    const double mask = p_.mask_rank ? static_cast<double>(io.at("attn_mask").bytes().size()) : 0;
    return read_kv + qo + store + mask;
  }

 private:
  MhcaParams p_;
};

class MhcaOperator final : public Operator {
 public:
  const Signature& signature() const override { return mhca_signature(); }
  std::unique_ptr<OpCase> instantiate(Args a) const override {
    MhcaParams p = parse_mhca_params(a);
    return std::make_unique<MhcaCase>(std::move(a), std::move(p));
  }
};

}  // namespace

std::unique_ptr<Operator> make_multi_head_cache_attention_operator() {
  return std::make_unique<MhcaOperator>();
}

}  // namespace kvbench
