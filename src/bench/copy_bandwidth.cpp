#include "bench/copy_bandwidth.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "vk/runtime.hpp"

namespace kvbench {
namespace {

constexpr size_t kCopyBytes = size_t{64} << 20;
constexpr uint32_t kLocalSize = 64;             // local_size_x of copy_bandwidth.comp
constexpr uint32_t kElementsPerInvocation = 4;  // the fastest on lavapipe (see the shader)
constexpr uint32_t kMaxGroups = 65535;          // the portable limit; the loop covers the rest

}  // namespace

CopyBandwidth measure_copy_bandwidth(Runtime& rt, const Repetitions& reps) {
  if (!rt.info().timestamps)
    throw std::runtime_error("device " + rt.info().name + " has no timestamp queries, which bench needs");
  // Within one storage buffer and one texel view (the source is read through one).
  const size_t bytes = std::min<uint64_t>({kCopyBytes, rt.info().max_storage_buffer_range,
                                           rt.info().max_texel_buffer_elements * 16}) /
                       16 * 16;
  if (bytes == 0)
    throw std::runtime_error("device " + rt.info().name +
                             " has no R32G32B32A32_UINT texel buffers, which bench's copy reads through");
  auto source = rt.buffer(bytes);
  auto destination = rt.buffer(bytes);
  // The destination is not written first: the warm-up's copies map its pages before the
  // first timed one.
  std::vector<uint8_t> pattern(bytes);
  for (size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<uint8_t>(i * 131 + 7);
  source->upload(pattern);

  const auto count = static_cast<uint32_t>(bytes / 16);  // uvec4 elements
  const uint32_t per_group = kLocalSize * kElementsPerInvocation;
  const uint32_t groups = std::min(kMaxGroups, (count + per_group - 1) / per_group);
  CopyBandwidth r;
  r.bytes = bytes;
  r.timing = time_repeated(rt, reps, 0, [&] {
    rt.dispatch("copy_bandwidth", {{"source", source.get()}, {"destination", destination.get()}},
                {{"count", count}}, groups);
  });
  std::vector<uint8_t> copied(bytes);
  destination->download(copied);
  if (copied != pattern)
    throw std::runtime_error("the copy-bandwidth kernel did not copy its buffer on " + rt.info().name);
  r.gbps =
      r.timing.time.median_ms > 0 ? 2.0 * static_cast<double>(bytes) / (r.timing.time.median_ms * 1e6) : 0;
  return r;
}

}  // namespace kvbench
