// ggml.SET_ROWS: f32 rows stored at indexed rows of a destination in any ggml KV type
// (llama.cpp's write of a token's K or V into its cache): dst[b, m, idx[b % IB, m % IM, i], :]
// = from_float(src[b, m, i, :]); every other row keeps its bytes. Definition: specs/ggml.md.
#include <algorithm>
#include <numeric>

#include "core/float_format.hpp"
#include "core/rng.hpp"
#include "ops/ggml/ggml_common.hpp"
#include "ops/ggml/ggml_ops.hpp"
#include "ops/vulkan_io.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

struct SetRowsShape {
  GgmlType type;
  DType index;
  int64_t batch, mats, rows, cols, n_idx, idx_mats, idx_batch;
  bool ties;  // src_values "ties"
};

class SetRowsCase final : public OpCase {
 public:
  SetRowsCase(Args a, SetRowsShape s) : OpCase(std::move(a)), s_(s) {}

  std::string describe() const override {
    return "dst=" + shape_string({s_.batch, s_.mats, s_.rows, s_.cols}) + " " + ggml_type_info(s_.type).name +
           " n_idx=" + std::to_string(s_.n_idx) + " indices=" + std::string(dtype_name(s_.index)) + " " +
           shape_string({s_.idx_batch, s_.idx_mats, s_.n_idx});
  }

  std::vector<TensorSpec> tensor_specs() const override {
    return {
        {"src", DType::f32, {s_.batch, s_.mats, s_.n_idx, s_.cols}},
        {"indices", s_.index, {s_.idx_batch, s_.idx_mats, s_.n_idx}},
        {"dst", ggml_type_info(s_.type).dtype, ggml_shape(s_.type, {s_.batch, s_.mats, s_.rows, s_.cols})}};
  }

  void fill(Tensor& t) const override {
    if (t.name() == "dst") return fill_ggml_rows(args(), t, s_.type, s_.cols, args().range("dst"));
    if (t.name() == "src" && s_.ties) {
      // Blocks whose codes all lie on ties: element 0 = 127 s (the block's amax, so d = s
      // exactly, s a power of two), the others (k + 1/2) s for random k in [-126, 125].
      const CounterRng rng(args().seed(), t.name());
      fill_with(t, [&](size_t i) {
        const double sblock = std::ldexp(1.0, static_cast<int>(rng.integer(2 * (i / 32 * 32), -8, 2)));
        if (i % 32 == 0) return 127 * sblock;
        return (static_cast<double>(rng.integer(2 * i + 1, -126, 125)) + 0.5) * sblock;
      });
      return;
    }
    if (t.name() == "src") return OpCase::fill(t);
    // Each (batch, matrix) of the indices: n_idx distinct rows in a shuffled order (two
    // writes to one row would race in every parallel implementation; ggml leaves it open).
    const CounterRng rng(args().seed(), t.name());
    std::vector<int64_t> values;
    std::vector<int64_t> perm(static_cast<size_t>(s_.rows));
    for (int64_t g = 0; g < s_.idx_batch * s_.idx_mats; ++g) {
      std::iota(perm.begin(), perm.end(), 0);
      for (int64_t i = 0; i < s_.n_idx; ++i) {  // a partial Fisher-Yates shuffle
        const auto j =
            static_cast<size_t>(rng.integer(static_cast<uint64_t>(g * s_.rows + i), i, s_.rows - 1));
        std::swap(perm[static_cast<size_t>(i)], perm[j]);
        values.push_back(perm[static_cast<size_t>(i)]);
      }
    }
    fill_values(t, values);
  }

  long double written_elements(const TensorSpec& spec) const override {
    return static_cast<long double>(s_.batch * s_.mats * s_.n_idx) *
           static_cast<long double>(spec.shape.back());
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    const Tensor& src = in.at("src");
    const Tensor& idx = in.at("indices");
    Expected e = Expected::unchanged(in.at("dst"));
    const int64_t width = ggml_row_width(s_.type, s_.cols);
    std::vector<float> x(static_cast<size_t>(s_.cols));
    std::vector<uint8_t> codes(static_cast<size_t>(width));
    std::vector<double> row(static_cast<size_t>(width)), exact(row.size());
    for (int64_t b = 0; b < s_.batch; ++b)
      for (int64_t m = 0; m < s_.mats; ++m)
        for (int64_t i = 0; i < s_.n_idx; ++i) {
          const int64_t target = index_at(idx, b, m, i);
          const int64_t from = (b * s_.mats + m) * s_.n_idx + i;
          for (int64_t c = 0; c < s_.cols; ++c)
            x[static_cast<size_t>(c)] = static_cast<float>(src.get(static_cast<size_t>(from * s_.cols + c)));
          store_row(x, codes, row, exact);
          const auto at = static_cast<size_t>(((b * s_.mats + m) * s_.rows + target) * width);
          e.write_row(at, row.size(), row.data(), exact.data());
          if (s_.type == GgmlType::q8_0) q8_0_tie_alternates(x, codes, e, at);
        }
    e.finish();
    return expected_list(std::move(e));
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    Batch batch(rt);
    DeviceTensors t(batch, io, args().signature());
    const auto written = static_cast<uint64_t>(s_.batch * s_.mats * s_.n_idx);
    const KernelParams params{{"written", written},        {"mats", s_.mats},
                              {"rows", s_.rows},           {"cols", s_.cols},
                              {"n_idx", s_.n_idx},         {"idx_mats", s_.idx_mats},
                              {"idx_batch", s_.idx_batch}, {"row_bytes", ggml_row_bytes(s_.type, s_.cols)}};
    batch.dispatch_invocations(
        Kernel("ggml_set_rows",
               {{"TYPE", static_cast<uint32_t>(s_.type)}, {"INDEX_I64", s_.index == DType::i64}}),
        {{"src", t.at("src")}, {"indices", t.at("indices")}, {"dst", t.at("dst")}}, params, written);
    t.download(io);
    return batch.submit();
  }

 private:
  int64_t index_at(const Tensor& idx, int64_t b, int64_t m, int64_t i) const {
    // fault indices_broadcast_divided: matrix m reads index row m / (mats / idx_mats).
    const int64_t im = fault_is("indices_broadcast_divided") ? m / (s_.mats / s_.idx_mats) : m % s_.idx_mats;
    const int64_t flat = ((b % s_.idx_batch) * s_.idx_mats + im) * s_.n_idx + i;
    return static_cast<int64_t>(idx.get(static_cast<size_t>(flat)));
  }

  // One row as ggml stores it: its values (codes' bytes) and their exact values.
  void store_row(std::vector<float>& x, std::vector<uint8_t>& codes, std::vector<double>& row,
                 std::vector<double>& exact) const {
    if (!ggml_is_quantized(s_.type)) {
      for (size_t c = 0; c < x.size(); ++c) {
        exact[c] = static_cast<double>(x[c]);
        row[c] = s_.type == GgmlType::bf16  ? bf16_bits_to_double(ggml_bf16_bits(x[c]))
                 : s_.type == GgmlType::f16 ? round_f16(exact[c])
                                            : exact[c];
      }
      return;
    }
    if (fault_is("q8_0_codes_from_f16_scale") && s_.type == GgmlType::q8_0) {
      quantize_q8_0_with_f16_scale(x, codes);
    } else {
      ggml_quantize_row(s_.type, x.data(), codes.data(), s_.cols);
    }
    for (size_t c = 0; c < codes.size(); ++c) row[c] = exact[c] = codes[c];
  }

  // specs/ggml.md "Decision: ties": a q8_0 code whose x * id lies within 4 ulp of a half
  // (roundf rounds it away from zero; x86's quantize_row_q8_0 rounds x * (127 / amax) to
  // even, ggml-vulkan's GLSL round() as the device chooses) may be the other neighbour.
  static void q8_0_tie_alternates(const std::vector<float>& x, const std::vector<uint8_t>& codes, Expected& e,
                                  size_t at) {
    for (size_t b = 0; b < x.size() / 32; ++b) {
      const float d = ggml_q8_0_scale(&x[b * 32]), id = d != 0.0f ? 1.0f / d : 0.0f;
      for (size_t j = 0; j < 32; ++j) {
        const float v = x[b * 32 + j] * id;
        const float lo = std::floor(v);
        if (std::fabs(v - (lo + 0.5f)) > 4 * std::fabs(std::nextafter(v, INFINITY) - v)) continue;
        const auto code = static_cast<int8_t>(codes[b * 34 + 2 + j]);
        const int other = code == static_cast<int>(lo) ? static_cast<int>(lo) + 1 : static_cast<int>(lo);
        if (other < -128 || other > 127) continue;
        e.set_alternate(at + b * 34 + 2 + j, static_cast<uint8_t>(static_cast<int8_t>(other)));
      }
    }
  }

  // The fault: q8_0 codes round(x / f16(d)) instead of round(x * (1 / d)) with d in f32.
  void quantize_q8_0_with_f16_scale(const std::vector<float>& x, std::vector<uint8_t>& out) const {
    for (int64_t b = 0; b < s_.cols / 32; ++b) {
      const uint16_t d16 = ggml_f16_bits(ggml_q8_0_scale(&x[static_cast<size_t>(b * 32)]));
      const auto d = static_cast<float>(f16_bits_to_double(d16));
      uint8_t* p = out.data() + b * 34;
      p[0] = static_cast<uint8_t>(d16 & 0xff), p[1] = static_cast<uint8_t>(d16 >> 8);
      for (int j = 0; j < 32; ++j)
        p[2 + j] = static_cast<uint8_t>(
            static_cast<int8_t>(d != 0 ? std::round(x[static_cast<size_t>(b * 32 + j)] / d) : 0.0f));
    }
  }

  SetRowsShape s_;
};

class SetRowsOperator final : public Operator {
 public:
  const Signature& signature() const override {
    static const Signature sig{
        .id = "ggml.SET_ROWS",
        .doc =
            "f32 rows stored at indexed rows of dst in any ggml KV type, the rest of dst kept: llama.cpp's "
            "write of K or V into a quantized KV cache (specs/ggml.md)",
        .params =
            {
                ggml_type_param("type", "dst's ggml type"),
                {.section = "attributes",
                 .name = "index_type",
                 .type = ParamType::string,
                 .fallback = "i64",
                 .allowed = {"i64", "i32"},
                 .doc = "the indices' type (llama.cpp's cache writes use i64)"},
                {.section = "attributes",
                 .name = "src_values",
                 .type = ParamType::string,
                 .fallback = "uniform",
                 .allowed = {"uniform", "ties"},
                 .doc = "uniform over src's range, or blocks whose q8_0 codes all lie on ties (x * id = k + "
                        "1/2)"},
                {.section = "shapes", .name = "batch", .fallback = 1, .min = 1, .doc = "ne3 of src and dst"},
                {.section = "shapes", .name = "mats", .fallback = 1, .min = 1, .doc = "ne2 of src and dst"},
                {.section = "shapes", .name = "rows", .min = 1, .doc = "dst rows (ne1)"},
                {.section = "shapes", .name = "cols", .min = 1, .doc = "elements per row (ne0)"},
                {.section = "shapes",
                 .name = "n_idx",
                 .min = 1,
                 .doc = "rows written per matrix (src ne1), <= rows"},
                {.section = "shapes",
                 .name = "idx_mats",
                 .fallback = 1,
                 .min = 1,
                 .doc = "indices ne1, divides mats (broadcast)"},
                {.section = "shapes",
                 .name = "idx_batch",
                 .fallback = 1,
                 .min = 1,
                 .doc = "indices ne2, divides batch (broadcast)"},
            },
        .tensors =
            {
                {.name = "src",
                 .shape = "[batch, mats, n_idx, cols]",
                 .dtype_rule = "f32",
                 .range = {{-1, 1}}},
                {.name = "indices",
                 .shape = "[idx_batch, idx_mats, n_idx]",
                 .dtype_rule = "= index_type",
                 .doc = "distinct rows within each (batch, matrix)"},
                {.name = "dst",
                 .role = Role::inplace,
                 .shape = "[batch, mats, rows, cols] (block types: [.., row bytes], u8)",
                 .dtype_rule = "= type",
                 .range = {{-2, 2}},
                 .doc = "initial rows drawn from [-2, 2) so that an unwritten row cannot look written"},
            },
        .from_files = {"src", "indices", "dst"},
        .sizes = {"batch", "mats", "n_idx", "rows", "cols", "idx_mats", "idx_batch"},
        .faults =
            {
                {"q8_0_codes_from_f16_scale",
                 "q8_0 codes round(x / f16(d)) where quantize_row_q8_0_ref rounds x * (1 / d) with d in f32",
                 "issue 60's fault list"},
                {"indices_broadcast_divided",
                 "matrix m takes index row m / (mats / idx_mats) where ggml broadcasts m % idx_mats",
                 "the broadcast rule of ggml_set_rows (ggml.c: b->ne[2] % c->ne[1] == 0)"},
            },
    };
    return sig;
  }

  std::unique_ptr<OpCase> instantiate(Args a) const override {
    SetRowsShape s{.type = ggml_type_arg(a, "type"),
                   .index = a.string("index_type") == "i32" ? DType::i32 : DType::i64,
                   .batch = a.integer("batch"),
                   .mats = a.integer("mats"),
                   .rows = a.integer("rows"),
                   .cols = a.integer("cols"),
                   .n_idx = a.integer("n_idx"),
                   .idx_mats = a.integer("idx_mats"),
                   .idx_batch = a.integer("idx_batch"),
                   .ties = a.string("src_values") == "ties"};
    if (s.ties && s.cols % 32)
      a.fail("src_values", "ties come in blocks of 32: cols must be a multiple of 32");
    require_whole_blocks(a, s.type, s.cols, "cols");
    if (s.n_idx > s.rows) a.fail("n_idx", "n_idx rows written must be at most rows (distinct rows)");
    if (s.mats % s.idx_mats) a.fail("idx_mats", "idx_mats must divide mats (ggml broadcasts the indices)");
    if (s.batch % s.idx_batch)
      a.fail("idx_batch", "idx_batch must divide batch (ggml broadcasts the indices)");
    return std::make_unique<SetRowsCase>(std::move(a), s);
  }
};

}  // namespace

std::unique_ptr<Operator> make_ggml_set_rows_operator() { return std::make_unique<SetRowsOperator>(); }

}  // namespace kvbench
