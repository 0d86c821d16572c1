// kvbench-ggml's pieces shared by its files (README.md here): a ggml device, a one-node
// graph with its inputs, and computing it. kvbench_ggml.cpp: the devices, the goldens' graphs,
// the run and timing modes and main; self_test.cpp: --self-test.
#pragma once
#include <ggml-backend.h>
#include <ggml.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kvbench_ggml {

struct Skip : std::runtime_error {  // exit 77: not implemented here
  using std::runtime_error::runtime_error;
};

using Ne = std::array<int64_t, 4>;
using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Device {
  ggml_backend_dev_t dev = nullptr;
  ggml_backend_t backend = nullptr;
  std::string label;  // "Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits))"
};

struct Graph {
  std::unique_ptr<ggml_context, decltype(&ggml_free)> ctx{nullptr, ggml_free};
  std::vector<std::pair<ggml_tensor*, std::span<const uint8_t>>> inputs;
  ggml_tensor* node = nullptr;    // the operator's node (asked of supports_op)
  ggml_tensor* result = nullptr;  // what is read back: the node, or SET_ROWS's destination
  std::string what;               // for messages: the op and its types

  Graph() {
    ggml_init_params p{ggml_tensor_overhead() * 16 + ggml_graph_overhead(), nullptr, /*no_alloc=*/true};
    ctx.reset(ggml_init(p));
    if (!ctx) throw std::runtime_error("ggml_init failed");
  }
  ggml_tensor* tensor(ggml_type type, Ne ne, const char* name) {
    if (ne[0] % ggml_blck_size(type) != 0)
      throw std::runtime_error(std::string(name) + ": " + std::to_string(ne[0]) +
                               " columns are not whole blocks of " + ggml_type_name(type) + " (" +
                               std::to_string(ggml_blck_size(type)) + ")");
    ggml_tensor* t = ggml_new_tensor(ctx.get(), type, 4, ne.data());
    ggml_set_name(t, name);
    return t;
  }
};

struct Buffer {
  ggml_backend_buffer_t b = nullptr;
  ~Buffer() { ggml_backend_buffer_free(b); }
};

// Asks supports_op (Skip if not), allocates the graph's tensors on the device, uploads the
// inputs and returns the graph of the node, ready to compute.
ggml_cgraph* prepare(const Device& d, Graph& g, Buffer& buf);
// One ggml_backend_graph_compute (it returns once the device is done): its wall time in ms.
double compute_graph(const Device& d, const Graph& g, ggml_cgraph* gf);
// prepare, then compute_graph once.
double compute(const Device& d, Graph& g, Buffer& buf);

// --self-test (self_test.cpp): 0 when both tests pass, else 1.
int self_test(const Device& d);

}  // namespace kvbench_ggml
