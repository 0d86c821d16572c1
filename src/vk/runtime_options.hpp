#pragma once
// How the runtime is set up (RuntimeOptions, read from the environment) and what became of
// its optional parts: the on-disk pipeline cache and the validation layer's messages.
#include <cstddef>
#include <optional>
#include <string>

namespace kvbench {

// How the runtime is set up; from_env() reads the environment (see specs/runtime.md).
struct RuntimeOptions {
  // Memory mode: unset chooses by device (zero-copy on an integrated GPU or CPU device with
  // device-local host-visible memory, else staging); true forces staging (KVBENCH_STAGING=1,
  // the discrete-GPU path on any device); false forces zero-copy (KVBENCH_STAGING=0).
  std::optional<bool> staging;
  // The VkPipelineCache stored on disk (KVBENCH_PIPELINE_CACHE=0 turns it off).
  bool pipeline_cache = true;
  // Where it is stored; empty: default_cache_dir().
  std::string cache_dir;
  // Whether operators may read through `_texels` views (KVBENCH_TEXELS=0: never, so that
  // their storage-buffer paths, which views too small for a tensor fall back to, are tested).
  bool texels = true;
  // A test's knob (KVBENCH_MAX_WORKGROUPS=N, N >= 1): the device's maxComputeWorkGroupCount
  // in x taken as at most N, so that small cases lay their launches out on a grid of several
  // rows (Batch::dispatch_groups) as model-scale ones do on a device of Vulkan's minimum,
  // 65535 (lavapipe, Adreno, Mali). 0: off.
  uint32_t max_workgroups = 0;
  // A test's knob (KVBENCH_MAX_SCRATCH=N bytes, N >= 1): kernels' scratch limited to N (below
  // maxStorageBufferRange: Runtime::scratch_limit), so that small attention plans run in
  // waves (src/ops/attention/attention_plan.hpp plan_waves). 0: off.
  uint64_t max_scratch = 0;
  // The Khronos validation layer, its messages counted (KVBENCH_VALIDATION=1).
  bool validation = false;
  static RuntimeOptions from_env();
};

// $KVBENCH_CACHE_DIR, else $XDG_CACHE_HOME/kvbench, else $HOME/.cache/kvbench ("" when none
// of these is set). Clearing the cache is `rm -r` of this directory.
std::string default_cache_dir();

// What became of the on-disk pipeline cache when the runtime was made.
struct PipelineCacheStatus {
  bool enabled = false;
  std::string path;         // the device's file (empty when disabled)
  size_t loaded_bytes = 0;  // the driver data taken from the file (0: none, or ignored)
  std::string ignored;      // why an existing file was not used ("" when it was, or there was none)
};

// What the validation layer reported (KVBENCH_VALIDATION=1): errors and warnings count,
// info/verbose messages and performance (best-practices) warnings do not.
struct ValidationMessages {
  size_t errors = 0, warnings = 0;
  std::string first;  // the first counted message: its severity, id and text
  size_t count() const { return errors + warnings; }
};

}  // namespace kvbench
