// ggml.GET_ROWS: rows of a tensor in any ggml KV type gathered by index and dequantized to
// f32 (llama.cpp's read of a quantized cache): out[b, m, i, :] = f32(src[b, m, idx[b, m, i], :]).
// Definition and sources: specs/ggml.md.
#include "core/float_format.hpp"
#include "core/rng.hpp"
#include "ops/ggml/ggml_common.hpp"
#include "ops/ggml/ggml_ops.hpp"
#include "ops/vulkan_io.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

struct GetRowsShape {
  GgmlType type;
  int64_t batch, mats, rows, cols, n_idx;
};

class GetRowsCase final : public OpCase {
 public:
  GetRowsCase(Args a, GetRowsShape s) : OpCase(std::move(a)), s_(s) {}

  std::string describe() const override {
    return "src=" + shape_string({s_.batch, s_.mats, s_.rows, s_.cols}) + " " + ggml_type_info(s_.type).name +
           " n_idx=" + std::to_string(s_.n_idx);
  }

  std::vector<TensorSpec> tensor_specs() const override {
    return {
        {"src", ggml_type_info(s_.type).dtype, ggml_shape(s_.type, {s_.batch, s_.mats, s_.rows, s_.cols})},
        {"indices", DType::i32, {s_.batch, s_.mats, s_.n_idx}},
        {"out", DType::f32, {s_.batch, s_.mats, s_.n_idx, s_.cols}}};
  }

  void fill(Tensor& t) const override {
    if (t.name() == "src") return fill_ggml_rows(args(), t, s_.type, s_.cols, args().range("src"));
    // Indices uniform over the rows, repeats allowed (ggml reads a row as often as asked).
    const CounterRng rng(args().seed(), t.name());
    for (size_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(rng.integer(i, 0, s_.rows - 1)));
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    const Tensor& src = in.at("src");
    const Tensor& idx = in.at("indices");
    std::vector<double> out(static_cast<size_t>(s_.batch * s_.mats * s_.n_idx * s_.cols));
    for (int64_t bm = 0; bm < s_.batch * s_.mats; ++bm)
      for (int64_t i = 0; i < s_.n_idx; ++i) {
        const auto r = static_cast<int64_t>(idx.get(static_cast<size_t>(bm * s_.n_idx + i)));
        double* o = &out[static_cast<size_t>((bm * s_.n_idx + i) * s_.cols)];
        // fault row_index_off_by_one: the row after the one asked for (the last wraps to 0).
        const int64_t row = fault_is("row_index_off_by_one") ? (r + 1) % s_.rows : r;
        ggml_row_values(src, s_.type, s_.cols, bm * s_.rows + row, o);
        if (fault_is("q4_0_offset_dropped") && s_.type == GgmlType::q4_0)
          for (int64_t c = 0; c < s_.cols; ++c) o[c] += 8 * block_scale(src, bm * s_.rows + row, c);
      }
    return expected_list(Expected::rounded(in.at("out"), std::move(out)));
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    Batch batch(rt);
    DeviceTensors t(batch, io, args().signature());
    const auto elements = static_cast<uint64_t>(s_.batch * s_.mats * s_.n_idx * s_.cols);
    const KernelParams params{{"elements", elements},
                              {"rows", s_.rows},
                              {"cols", s_.cols},
                              {"n_idx", s_.n_idx},
                              {"row_bytes", ggml_row_bytes(s_.type, s_.cols)}};
    batch.dispatch_invocations(
        Kernel("ggml_get_rows", {{"TYPE", static_cast<uint32_t>(s_.type)}}),
        {{"src", t.at("src")}, {"indices", t.at("indices")}, {"out_rows", t.at("out")}}, params, elements);
    t.download(io);
    return batch.submit();
  }

 private:
  // The f16 scale of the block holding element c of row `row` (q4_0: its first two bytes).
  double block_scale(const Tensor& src, int64_t row, int64_t c) const {
    const uint8_t* p = src.bytes().data() + row * ggml_row_width(s_.type, s_.cols) + c / 32 * 18;
    return f16_bits_to_double(static_cast<uint16_t>(p[0] | p[1] << 8));
  }
  GetRowsShape s_;
};

class GetRowsOperator final : public Operator {
 public:
  const Signature& signature() const override {
    static const Signature sig{
        .id = "ggml.GET_ROWS",
        .doc =
            "rows of src (any ggml KV type) gathered by index and dequantized to f32: llama.cpp's read "
            "of a quantized KV cache (specs/ggml.md)",
        .params =
            {
                ggml_type_param("type", "src's ggml type"),
                {.section = "shapes", .name = "batch", .fallback = 1, .min = 1, .doc = "ne12 = src ne3"},
                {.section = "shapes", .name = "mats", .fallback = 1, .min = 1, .doc = "ne11 = src ne2"},
                {.section = "shapes", .name = "rows", .min = 1, .doc = "src rows (ne01)"},
                {.section = "shapes", .name = "cols", .min = 1, .doc = "elements per row (ne00)"},
                {.section = "shapes", .name = "n_idx", .min = 1, .doc = "rows read per matrix (ne10)"},
            },
        .tensors =
            {
                {.name = "src",
                 .shape = "[batch, mats, rows, cols] (block types: [.., row bytes], u8)",
                 .dtype_rule = "= type",
                 .range = {{-1, 1}},
                 .doc = "values drawn in f32 and stored as ggml stores them (quantize_row_*_ref)"},
                {.name = "indices",
                 .shape = "[batch, mats, n_idx]",
                 .dtype_rule = "i32",
                 .doc = "rows of src"},
                {.name = "out",
                 .role = Role::output,
                 .shape = "[batch, mats, n_idx, cols]",
                 .dtype_rule = "f32"},
            },
        .from_files = {"src", "indices"},
        .sizes = {"batch", "mats", "n_idx", "rows", "cols"},
        .faults =
            {
                {"row_index_off_by_one", "the row after the indexed one read", ""},
                {"q4_0_offset_dropped", "q4_0 codes dequantized as code * d, without subtracting 8",
                 "issue 60's fault list"},
            },
    };
    return sig;
  }

  std::unique_ptr<OpCase> instantiate(Args a) const override {
    GetRowsShape s{.type = ggml_type_arg(a, "type"),
                   .batch = a.integer("batch"),
                   .mats = a.integer("mats"),
                   .rows = a.integer("rows"),
                   .cols = a.integer("cols"),
                   .n_idx = a.integer("n_idx")};
    require_whole_blocks(a, s.type, s.cols, "cols");
    return std::make_unique<GetRowsCase>(std::move(a), s);
  }
};

}  // namespace

std::unique_ptr<Operator> make_ggml_get_rows_operator() { return std::make_unique<GetRowsOperator>(); }

}  // namespace kvbench
