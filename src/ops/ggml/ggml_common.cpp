#include "ops/ggml/ggml_common.hpp"

#include <vector>

#include "core/rng.hpp"

namespace kvbench {

Param ggml_type_param(const std::string& name, const std::string& doc, nlohmann::json fallback) {
  Param p{.section = "attributes",
          .name = name,
          .type = ParamType::string,
          .fallback = std::move(fallback),
          .doc = doc};
  for (const std::string& t : ggml_type_names()) p.allowed.emplace_back(t);
  return p;
}

GgmlType ggml_type_arg(const Args& a, const std::string& key) {
  const std::string name = a.string(key);
  if (const auto t = parse_ggml_type(name)) return *t;
  a.fail(key, "not a ggml type: " + name);
}

void require_whole_blocks(const Args& a, GgmlType t, int64_t cols, const std::string& cols_key) {
  const GgmlTypeInfo& i = ggml_type_info(t);
  if (cols % i.block != 0)
    a.fail(cols_key, cols_key + " " + std::to_string(cols) + " is not a multiple of " + i.name +
                         "'s block of " + std::to_string(i.block) + " elements");
}

Shape ggml_shape(GgmlType t, Shape s) {
  s.back() = ggml_row_width(t, s.back());
  return s;
}

void fill_ggml_rows(const Args& a, Tensor& t, GgmlType type, int64_t cols, std::pair<double, double> range) {
  const CounterRng rng(a.seed(), t.name());
  const GgmlTypeInfo& info = ggml_type_info(type);
  const int64_t width = ggml_row_width(type, cols);
  const auto rows = static_cast<int64_t>(t.numel()) / width;
  std::vector<float> x(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      x[static_cast<size_t>(c)] =
          static_cast<float>(rng.uniform(static_cast<uint64_t>(r * cols + c), range.first, range.second));
    if (info.block == 1) {
      for (int64_t c = 0; c < cols; ++c) {
        const auto i = static_cast<size_t>(r * cols + c);
        if (type == GgmlType::bf16)
          t.set_bits(i, ggml_bf16_bits(x[static_cast<size_t>(c)]));
        else
          t.set(i, static_cast<double>(x[static_cast<size_t>(c)]));
      }
    } else {
      ggml_quantize_row(type, x.data(), t.bytes().data() + r * width, cols);
    }
  }
}

void ggml_row_values(const Tensor& t, GgmlType type, int64_t cols, int64_t row, double* out) {
  if (!ggml_is_quantized(type)) {
    t.get_range(static_cast<size_t>(row * cols), static_cast<size_t>(cols), out);
    return;
  }
  const int64_t width = ggml_row_width(type, cols);
  ggml_dequantize_row(type, t.bytes().data() + row * width, out, cols);
}

}  // namespace kvbench
