#pragma once
// Two plain C++ kernels, written from kvbench's specs and nothing else, to show a kernel
// tested through kvbench's C++ library: kvbench.DequantizeGroup (specs/quantize-group.md)
// and pmx.KeyValueCache (specs/key_value_cache.md). Each reads a golden case's inputs and
// attributes and writes its outputs into the buffers Golden::output gives.
#include <map>
#include <string>

#include <kvbench/golden.hpp>

namespace example {

// A deliberate error for the example's own test (KVBENCH_PLANT=1): the dequantized value of
// element 0 one step off, and KeyValueCache's codes truncated instead of rounded (in an
// unquantized cache, key element 0 one step off).
struct Options {
  bool plant = false;
};

std::map<std::string, kvbench::Array> dequantize_group(const kvbench::Golden& g, Options o);
std::map<std::string, kvbench::Array> key_value_cache(const kvbench::Golden& g, Options o);

}  // namespace example
