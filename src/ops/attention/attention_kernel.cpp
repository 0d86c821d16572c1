#include "ops/attention/attention_kernel.hpp"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace kvbench {

namespace {

// The value of environment variable `name` ("" when unset), which must be one of `allowed`:
// anything else is an error that says what it may be (`choices`), so that a misspelled
// setting never runs the default silently.
std::string env_choice(const char* name, std::initializer_list<std::string_view> allowed,
                       const char* choices) {
  const char* v = std::getenv(name);
  const std::string s = v ? v : "";
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    throw std::runtime_error(std::string(name) + " must be " + choices + ", not '" + s + "'");
  return s;
}

// KVBENCH_KERNEL: "gpu", "cpu", "decode", or unset/empty (the rule); anything else is an error.
std::optional<AttentionKernel> forced_kernel() {
  const std::string s = env_choice("KVBENCH_KERNEL", {"", "gpu", "cpu", "decode"}, "gpu, cpu or decode");
  if (s == "gpu") return AttentionKernel::tiles;
  if (s == "cpu") return AttentionKernel::lanes;
  if (s == "decode") return AttentionKernel::decode;
  return std::nullopt;
}

// KVBENCH_F16_DEQUANT: "0" keeps the decode kernel's f32 dequantization on a device that
// could run the f16 one (how lavapipe tests both); unset or "1" uses it where it can.
bool f16_dequant_allowed() { return env_choice("KVBENCH_F16_DEQUANT", {"", "0", "1"}, "0 or 1") != "0"; }

bool lanes_can_run(const DeviceInfo& dev) { return dev.subgroup_size >= 8 && dev.subgroup_shuffle; }

// Items of 4 lanes give each lane D / 4 elements: at most 32, lavapipe's unrolling limit.
bool four_lanes_fit(const AttentionHeads& h) { return h.key_dim <= 128 && h.value_dim <= 128; }

// KVBENCH_FOUR_LANES: "all" gives items of 4 lanes to every decode that fits them, however
// short (how the full tier checks every code variant at 4 lanes per item); unset or empty:
// only to decodes of at least kFourLanesMinKeyRows K rows.
bool four_lanes_for_all() { return env_choice("KVBENCH_FOUR_LANES", {"", "all"}, "all or empty") == "all"; }

// K rows a shape reads: keys times kv heads, summed over its batches.
int64_t key_rows(const AttentionShape& s) {
  int64_t keys = 0;
  for (int64_t n : s.kv_len) keys += n;
  return keys * s.num_kv_heads;
}

bool lanes_heads_fit(const AttentionHeads& h) {
  return h.lanes_fit && h.key_dim % 8 == 0 && h.value_dim % 8 == 0 && h.key_dim <= 256 && h.value_dim <= 256;
}

}  // namespace

AttentionKernel choose_attention_kernel(const DeviceInfo& dev, const AttentionHeads& heads, bool single_row) {
  const auto forced = forced_kernel();
  if (forced && *forced != AttentionKernel::decode) return *forced;
  // Forced, the decode kernel runs any batch (its items hold query rows like the others'),
  // and on a device that cannot promise its subgroups it is still chosen, so that
  // check_attention_device refuses the case with the reason; by the rule, a GPU's decodes,
  // the shapes it is built for.
  if (forced && decode_fits(dev, heads)) return AttentionKernel::decode;
  if (!forced && single_row && dev.type != "cpu" && decode_can_run(dev, heads))
    return AttentionKernel::decode;
  return dev.type == "cpu" && lanes_can_run(dev) && lanes_heads_fit(heads) ? AttentionKernel::lanes
                                                                           : AttentionKernel::tiles;
}

AttentionKernel attention_kernel_for(const DeviceInfo& dev, const AttentionHeads& heads,
                                     const AttentionShape& shape) {
  return choose_attention_kernel(dev, heads, single_query_row(shape));
}

int64_t attention_slice_elements(AttentionKernel kernel, int64_t dim) {
  return kernel == AttentionKernel::lanes ? dim / kVectorsPerItem : 8;
}

uint32_t tiles_shared_bytes(int64_t key_dim, int64_t value_dim) {
  // shaders/attention_tiles.glsl: q_s[NV * D], kv_s[TK * (max(D, DV) + 1)], p_s[NV * TK], 3 x [NV], and the
  // key handles h_s[2 * TK] of two words.
  const int64_t nv = kVectorsPerItem, maxd = std::max(key_dim, value_dim), tk = maxd <= 256 ? 16 : 4;
  return static_cast<uint32_t>(4 * (nv * key_dim + tk * (maxd + 1) + nv * tk + 3 * nv + 4 * tk));
}

bool decode_splits_heads(uint32_t vectors, int64_t value_dim) { return vectors > 8 || value_dim > 256; }

void set_decode_constants(std::map<std::string, uint32_t>& constants, uint32_t subgroup, uint32_t vectors,
                          int64_t value_dim) {
  constants["SG"] = subgroup;
  constants["NV"] = vectors;
  constants["HS"] = decode_splits_heads(vectors, value_dim) ? 1 : 0;
  constants["local_size_x"] = kDecodeSubgroups * subgroup;
}

uint32_t decode_shared_bytes(int64_t key_dim, int64_t value_dim, uint32_t vectors, uint32_t subgroup) {
  // shaders/attention_decode.glsl: vec4s of max(q + NSG * 2 parity buffers of NVS weights and a key
  // handle's two words per lane, NSG states of NVS * (DV + 2) floats), NVS the vectors per subgroup.
  const int64_t nv = vectors, sg4 = subgroup / 4;
  const int64_t nvs = decode_splits_heads(vectors, value_dim) ? nv / kDecodeSubgroups : nv;
  const int64_t loop4 = nv * key_dim / 4 + int64_t{kDecodeSubgroups} * 2 * (nvs + 2) * sg4;
  const int64_t end4 = (int64_t{kDecodeSubgroups} * nvs * (value_dim + 2) + 3) / 4;
  return static_cast<uint32_t>(16 * std::max(loop4, end4));
}

uint32_t decode_vectors(const DeviceInfo& dev, const AttentionHeads& heads, int64_t most) {
  // With heads split every subgroup takes NV / 4 vectors: NV a multiple of 4.
  auto shaped = [&](int64_t n) {
    return decode_splits_heads(static_cast<uint32_t>(n), heads.value_dim) ? (n + 3) / 4 * 4 : n;
  };
  int64_t nv = shaped(std::clamp<int64_t>(most, 1, kDecodeMaxVectors));
  const uint32_t sg = decode_subgroup_size(dev);
  while (decode_shared_bytes(heads.key_dim, heads.value_dim, static_cast<uint32_t>(nv), sg) >
         dev.shared_memory_bytes) {
    const int64_t fewer = shaped(nv > 8 ? 8 : nv / 2);
    if (fewer >= nv) return 0;
    nv = fewer;
  }
  return static_cast<uint32_t>(nv);
}

uint32_t decode_live_floats(uint32_t subgroup) {
  const uint32_t vectors = 8, chunks = 128 / 8;  // NV and NCHV at the reference load
  const uint32_t cpl = subgroup >= chunks ? 1 : (chunks + subgroup - 1) / subgroup;
  return vectors * (8 * cpl + 2) + 16;
}

uint32_t lane_register_budget(const DeviceInfo& dev, uint32_t subgroup) {
  return dev.vendor_id == 0x8086 ? 2048 / std::max(subgroup, 1u) : 255;
}

uint32_t decode_subgroup_size(const DeviceInfo& dev) {
  const uint32_t fallback = dev.subgroup_size;
  const auto usable = [&](uint32_t s) {
    return dev.can_require_subgroups(s, kDecodeSubgroups) &&
           kDecodeSubgroups * s <= std::min(dev.max_workgroup_invocations, dev.max_workgroup_size_x);
  };
  const auto fits = [&](uint32_t s) { return decode_live_floats(s) <= lane_register_budget(dev, s); };
  if (!dev.subgroup_size_control || (usable(fallback) && fits(fallback))) return fallback;
  uint32_t smallest = 0;
  for (uint32_t s = 64; s >= 4; s /= 2) {
    if (!usable(s)) continue;
    if (fits(s)) return s;
    smallest = s;
  }
  return smallest ? smallest : fallback;
}

std::string decode_device_refusal(const DeviceInfo& dev) {
  const uint32_t sg = decode_subgroup_size(dev), wg = kDecodeSubgroups * sg;
  const std::string lanes = std::to_string(sg) + " lanes";
  if (!dev.subgroup_arithmetic) return dev.name + " has no subgroup reductions in compute shaders";
  if (sg < 4 || sg > 64 || (sg & (sg - 1)) != 0)
    return "the decode kernel needs subgroups of 4 to 64 lanes, a power of two; " + dev.name + " has " +
           lanes;
  if (!dev.subgroup_size_broken.empty())
    return dev.name + " does not keep its promise of required subgroup sizes (" + dev.subgroup_size_broken +
           "), and the decode kernel needs " + std::to_string(kDecodeSubgroups) +
           " full subgroups of the size it was built for";
  if (!dev.subgroup_size_control)
    return dev.name +
           " cannot require a subgroup size with full subgroups (VK_EXT_subgroup_size_control's "
           "subgroupSizeControl and computeFullSubgroups for compute), and the decode kernel needs " +
           std::to_string(kDecodeSubgroups) + " full subgroups of the size it was built for";
  if (!dev.can_require_subgroups(sg, kDecodeSubgroups))
    return dev.name + " cannot require " + std::to_string(kDecodeSubgroups) + " subgroups of " + lanes +
           " per workgroup (sizes " + std::to_string(dev.min_subgroup_size) + "-" +
           std::to_string(dev.max_subgroup_size) + ", at most " +
           std::to_string(dev.max_workgroup_subgroups) + " per workgroup)";
  if (dev.max_workgroup_invocations < wg || dev.max_workgroup_size_x < wg)
    return "the decode kernel needs workgroups of " + std::to_string(wg) + " invocations; " + dev.name +
           " allows " + std::to_string(std::min(dev.max_workgroup_invocations, dev.max_workgroup_size_x));
  return "";
}

bool decode_fits(const DeviceInfo& dev, const AttentionHeads& heads) {
  return heads.key_dim % 8 == 0 && heads.value_dim % 8 == 0 && heads.key_dim <= 576 &&
         heads.value_dim <= 512 && decode_vectors(dev, heads, 1) > 0;
}

bool decode_can_run(const DeviceInfo& dev, const AttentionHeads& heads) {
  return decode_device_refusal(dev).empty() && decode_fits(dev, heads);
}

void check_attention_device(const DeviceInfo& dev, const AttentionHeads& heads) {
  const int64_t kd = heads.key_dim, vd = heads.value_dim;
  if (kd % 8 != 0 || vd % 8 != 0 || kd <= 0 || vd <= 0)
    throw SkipCase("the attention kernels need head sizes that are multiples of 8 (" + std::to_string(kd) +
                   ", " + std::to_string(vd) + ")");
  const AttentionKernel kernel = choose_attention_kernel(dev, heads);
  if (kernel == AttentionKernel::decode) {  // chosen only where it fits, forced also where the device refuses
    const std::string refusal = decode_device_refusal(dev);
    if (!refusal.empty()) throw SkipCase("KVBENCH_KERNEL=decode: " + refusal);
  }
  if (kernel == AttentionKernel::lanes) {
    if (!lanes_can_run(dev))
      throw SkipCase(
          "the cpu attention kernel (KVBENCH_KERNEL=cpu) needs subgroups of at least 8 lanes with "
          "shuffles; " +
          dev.name + " has " + std::to_string(dev.subgroup_size));
    if (!lanes_heads_fit(heads))
      throw SkipCase(
          "the cpu attention kernel (KVBENCH_KERNEL=cpu) needs head sizes of at most 256 that split over 8 "
          "lanes (" +
          std::to_string(kd) + ", " + std::to_string(vd) + ")");
    return;
  }
  if (kd > 576 || vd > 512)
    throw SkipCase("the attention kernel supports head sizes up to 576 (Q/K) and 512 (V), not " +
                   std::to_string(kd) + ", " + std::to_string(vd));
  const uint32_t shared = tiles_shared_bytes(kd, vd);
  if (shared > dev.shared_memory_bytes)
    throw SkipCase("the gpu attention kernel needs " + std::to_string(shared) +
                   " bytes of shared memory at head sizes " + std::to_string(kd) + "/" + std::to_string(vd) +
                   "; " + dev.name + " gives " + std::to_string(dev.shared_memory_bytes));
  // The kernel's workgroups, and its merge's (Vulkan guarantees only 128 invocations).
  const uint32_t wg = std::max(kTilesWorkgroup, kMergeSplitsWorkgroup);
  if (dev.max_workgroup_invocations < wg || dev.max_workgroup_size_x < wg)
    throw SkipCase("the gpu attention kernel and its merge need workgroups of " + std::to_string(wg) +
                   " invocations; " + dev.name + " allows " +
                   std::to_string(std::min(dev.max_workgroup_invocations, dev.max_workgroup_size_x)));
}

namespace {

// attention_vectors_per_item once the kernel is chosen.
uint32_t vectors_per_item(AttentionKernel kernel, const DeviceInfo& dev, const AttentionHeads& heads,
                          const AttentionShape& shape) {
  const int64_t most = max_vectors_per_kv_head(shape);
  const bool for_all = four_lanes_for_all();  // read always: a bad value is an error for any case
  if (kernel == AttentionKernel::decode) return decode_vectors(dev, heads, most);
  const bool four = kernel == AttentionKernel::lanes && four_lanes_fit(heads) && most <= 4 &&
                    (for_all || key_rows(shape) >= kFourLanesMinKeyRows);
  return four ? 4 : kVectorsPerItem;
}

}  // namespace

uint32_t attention_vectors_per_item(const DeviceInfo& dev, const AttentionHeads& heads,
                                    const AttentionShape& shape) {
  return vectors_per_item(attention_kernel_for(dev, heads, shape), dev, heads, shape);
}

std::string attention_module(const std::string& lanes_module, AttentionKernel kernel, bool has_decode_f16,
                             const DeviceInfo& dev) {
  const bool f16_allowed = f16_dequant_allowed();  // read always: a bad value is an error on any device
  switch (kernel) {
    case AttentionKernel::lanes: return lanes_module;
    case AttentionKernel::tiles: return lanes_module + "_tiles";
    case AttentionKernel::decode:
      return lanes_module + (has_decode_f16 && dev.f16_rte && f16_allowed ? "_decode_f16" : "_decode");
  }
  throw std::logic_error("attention_module: unknown kernel");
}

namespace {

// run_attention with the kernel chosen (once) for the plan's shape; with the shape, in
// waves where the plan's scratch exceeds the device's (plan_waves).
void run_planned(Batch& batch, const AttentionPlan& whole, const AttentionShape* shape,
                 AttentionKernel kernel, AttentionLaunch launch);
// The most keys a split may hold on `dev` (0: no cap): below at its definition.
int64_t split_key_cap(const DeviceInfo& dev, AttentionKernel kernel, const AttentionHeads& heads);

}  // namespace

void run_attention(Batch& batch, const AttentionShape& shape, AttentionLaunch launch) {
  const DeviceInfo& dev = batch.runtime().info();
  const AttentionKernel kernel = attention_kernel_for(dev, launch.heads, shape);
  // Two items per compute unit at least (DeviceInfo::compute_units).
  const DecodeSplit split{
      .max_keys = kernel == AttentionKernel::lanes ? kDecodeSplitLanes : kDecodeSplitTiles,
      .target_items = 2 * static_cast<int64_t>(dev.compute_units),
      .cap_keys = split_key_cap(dev, kernel, launch.heads)};
  const AttentionPlan plan = plan_attention(shape, vectors_per_item(kernel, dev, launch.heads, shape), split);
  for (size_t b = 2; b < plan.batch_plan.size(); b += 3)
    if (split.cap_keys && plan.batch_plan[b] > split.cap_keys)
      throw SkipCase(dev.name + " ends a shader's loops after " + std::to_string(dev.loop_iteration_limit) +
                     " iterations in all, which the attention kernel keeps to with splits of at most " +
                     std::to_string(split.cap_keys) + " keys; " + std::to_string(shape.kv_len[b / 3]) +
                     " keys in at most " + std::to_string(kMaxMergeSplits) + " splits need " +
                     std::to_string(plan.batch_plan[b]));
  run_planned(batch, plan, &shape, kernel, std::move(launch));
}

void run_attention(Batch& batch, const AttentionPlan& plan, AttentionLaunch launch) {
  const AttentionKernel kernel =
      choose_attention_kernel(batch.runtime().info(), launch.heads, plan.single_row);
  run_planned(batch, plan, nullptr, kernel, std::move(launch));
}

namespace {

// The most keys one split may hold on `dev` (0: no cap) so that an invocation of the lanes or
// tiles kernel stays within the device's loop budget (DeviceInfo::loop_iteration_limit,
// llvmpipe's 65535). The lanes kernel loops once per key (its inner loops unroll): half the
// budget, the rest for its other loops. The tiles kernel loops per tile of TK keys over the
// dot product (D), P.V (TK x ceil(DV / 16)) and a few short loops: an upper bound of
// D + TK (ceil(DV / 16) + 4) + 16 a tile, within 90 % of the budget. The decode kernel's
// splits (256 keys, longer only past 131072 keys) stay far below it. Measured on lavapipe
// before the cap: SDPA at D 264 passed 952 keys in one split and failed 953 (the tiles
// kernel's 238th tile), the lanes kernel a 70000-key prefill split (specs/attention-kernels.md).
int64_t split_key_cap(const DeviceInfo& dev, AttentionKernel kernel, const AttentionHeads& heads) {
  const int64_t budget = dev.loop_iteration_limit;
  if (budget == 0 || kernel == AttentionKernel::decode) return 0;
  if (kernel == AttentionKernel::lanes) return budget / 2 / 16 * 16;
  const int64_t tk = std::max(heads.key_dim, heads.value_dim) <= 256 ? 16 : 4;
  const int64_t per_tile = heads.key_dim + tk * ((heads.value_dim + 15) / 16 + 4) + 16;
  return std::max<int64_t>(16, budget * 9 / 10 / per_tile * tk / 16 * 16);
}

// KVBENCH_DIRECT=0 sends every plan through the partial states and the merge, as plans with
// split vectors go (so that the merge keeps being tested on prefills); unset or 1: direct
// output where it applies (run_planned).
bool direct_output_allowed() { return env_choice("KVBENCH_DIRECT", {"", "0", "1"}, "0 or 1") != "0"; }

void run_planned(Batch& batch, const AttentionPlan& whole, const AttentionShape* shape,
                 AttentionKernel kernel, AttentionLaunch launch) {
  const DeviceInfo& dev = batch.runtime().info();
  const bool lanes = kernel == AttentionKernel::lanes;
  // A lane per query vector: 4 lanes per item for plans of 4-vector items, else 8.
  const uint32_t lanes_per_item =
      whole.vectors_per_item <= 4 && four_lanes_fit(launch.heads) ? 4 : kVectorsPerItem;
  const auto& pq = launch.post_quant;
  const uint32_t per_word = 32 / dtype_bits(launch.out_dtype);
  // The tiles kernel finishes the vectors itself (attention_tiles.glsl's direct output) where
  // every vector has one split: no partial states, no merge. It stages the accumulators in
  // q's shared memory, so DV <= D. Not the lanes kernel (lavapipe's): written there, the
  // finish compiled to about 7x the pipeline's LLVM time (MHCA's suite from an empty cache
  // 11 -> 82 s), and a CPU device pays little for the partial states.
  bool direct = kernel == AttentionKernel::tiles && direct_output_allowed() &&
                launch.heads.value_dim <= launch.heads.key_dim;
  for (size_t b = 1; b < whole.batch_plan.size(); b += 3) direct = direct && whole.batch_plan[b] == 1;
  std::vector<uint32_t> direct_table(8, 0);
  if (direct) {
    direct_table = {1,
                    static_cast<uint32_t>(launch.out_dtype),
                    launch.empty == EmptyRow::zeros,
                    launch.lse != nullptr,
                    pq.per_channel,
                    pq.offset != nullptr,
                    static_cast<uint32_t>(pq.dtype),
                    launch.sinks != nullptr};
    direct_table.resize(8 + 2 * whole.slots);
    for (size_t o = 0; o < whole.merge.size() / 4; ++o) {  // slot -> output vector, lse index
      direct_table[8 + 2 * size_t{whole.merge[4 * o]}] = static_cast<uint32_t>(o);
      direct_table[9 + 2 * size_t{whole.merge[4 * o]}] = whole.merge[4 * o + 2];
    }
  }
  launch.buffers["direct"] = batch.buffer_with(direct_table);
  launch.buffers["out"] = launch.out;
  launch.buffers["lse"] = launch.lse;
  launch.buffers["quantScale2"] = pq.scale;
  launch.buffers["quantOffset2"] = pq.offset;
  launch.buffers["sinks"] = launch.sinks;
  const uint64_t slot_bytes = static_cast<uint64_t>(launch.head_dim + 2) * 4,
                 limit = batch.runtime().scratch_limit();
  // Waves whose partial states each fit the limit (plan_waves), over one scratch buffer.
  const std::vector<AttentionPlan> waves =
      direct  ? std::vector<AttentionPlan>{whole}
      : shape ? plan_waves(whole, *shape, limit / slot_bytes)
              : (whole.slots * slot_bytes <= limit ? std::vector<AttentionPlan>{whole}
                                                   : std::vector<AttentionPlan>{});
  if (waves.empty())
    throw SkipCase("the attention kernel's scratch (" + std::to_string(whole.slots) +
                   " partial softmax states of " + std::to_string(launch.head_dim) + " + 2 floats, " +
                   std::to_string(attention_scratch_bytes(whole, launch.head_dim)) +
                   " bytes) cannot be cut into waves of whole query rows within " + std::to_string(limit) +
                   " bytes (maxStorageBufferRange of " + dev.name + ")");
  uint64_t most_slots = 0;
  for (const auto& w : waves) most_slots = std::max(most_slots, w.slots);
  Buffer* partials = direct ? nullptr : batch.scratch(static_cast<size_t>(most_slots * slot_bytes));
  launch.kernel.shader = attention_module(launch.kernel.shader, kernel, launch.decode_f16, dev);
  if (kernel == AttentionKernel::decode) {
    const uint32_t sg = decode_subgroup_size(dev);
    set_decode_constants(launch.kernel.constants, sg, whole.vectors_per_item, launch.heads.value_dim);
    launch.kernel.subgroup_size = sg;  // NSG full subgroups of SG lanes (decode_device_refusal)
  } else if (lanes) {
    launch.kernel.constants["LANES"] = lanes_per_item;
    if (launch.lanes_constants) launch.lanes_constants(launch.kernel.constants, lanes_per_item);
    // An item's lanes share one subgroup (its first lane at a multiple of LANES) wherever
    // the device can promise full subgroups; without that the driver's choice is taken.
    const uint32_t sg = dev.subgroup_size;
    if (sg && kLanesWorkgroup % sg == 0 && dev.can_require_subgroups(sg, kLanesWorkgroup / sg))
      launch.kernel.subgroup_size = sg;
  }
  const uint64_t elements = whole.merge.size() / 4 * static_cast<uint64_t>(launch.head_dim);
  // The gpu kernel's merge: a workgroup per output vector, parallel over its splits; the cpu
  // kernel's: an invocation per output word (faster on lavapipe: specs/attention-kernels.md).
  // Constants: whether the partials are read through their texel view, and output elements per word.
  const Kernel merge_kernel(lanes ? "attention_merge" : "attention_merge_splits",
                            {{"TEXELS", partials && batch.runtime().texels_cover(partials->size()) ? 1u : 0u},
                             {"PER_WORD", per_word}});
  const KernelParams merge_params{{"elements", elements},
                                  {"head_dim", launch.head_dim},
                                  {"out_dtype", static_cast<uint32_t>(launch.out_dtype)},
                                  {"empty_zeros", launch.empty == EmptyRow::zeros},
                                  {"has_lse", launch.lse != nullptr},
                                  {"pq_per_channel", pq.per_channel},
                                  {"pq_offset", pq.offset != nullptr},
                                  {"pq_dtype", static_cast<uint32_t>(pq.dtype)},
                                  {"has_sinks", launch.sinks != nullptr}};
  launch.buffers["partials"] = partials;
  for (const AttentionPlan& plan : waves) {
    // NaN in every partial state first: a slot the plan leaves unwritten makes its output
    // vectors NaN, on lavapipe (whose fresh memory reads as zeros) as on a GPU (stale memory).
    if (partials) batch.fill(*partials, kPartialsPoison);
    launch.buffers["batch_plan"] = batch.buffer_with(plan.batch_plan);
    launch.buffers["items"] = batch.buffer_with(plan.items);
    launch.params.insert_or_assign("num_items", plan.num_items);
    batch.dispatch_groups(
        launch.kernel, launch.buffers, launch.params,
        lanes ? (uint64_t{plan.num_items} * lanes_per_item + kLanesWorkgroup - 1) / kLanesWorkgroup
              : plan.num_items);  // lanes: a lane per query vector; else a workgroup per item
    if (direct) break;            // the kernel wrote the outputs: no merge
    // The wave's output vectors lie in [lo, hi): the merge runs over those only.
    size_t lo = plan.merge.size() / 4, hi = 0;
    for (size_t v = 0; v < plan.merge.size() / 4; ++v)
      if (plan.merge[4 * v] != kOtherWave) lo = std::min(lo, v), hi = v + 1;
    if (hi <= lo) continue;
    KernelParams params = merge_params;
    params.insert_or_assign("first_vector", static_cast<uint32_t>(lo));
    const uint64_t span = hi - lo;
    batch.dispatch_groups(merge_kernel,
                          {{"partials", partials},
                           {"merge", batch.buffer_with(plan.merge)},
                           {"out", launch.out},
                           {"lse", launch.lse},
                           {"quantScale2", pq.scale},
                           {"quantOffset2", pq.offset},
                           {"sinks", launch.sinks}},
                          params, lanes ? (span * launch.head_dim / per_word + 63) / 64 : span);
  }
}

}  // namespace

}  // namespace kvbench
