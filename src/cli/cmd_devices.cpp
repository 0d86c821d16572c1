#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

std::unique_ptr<Runtime> open_device(int device) {
  try {
    return std::make_unique<Runtime>(device >= 0 ? std::optional<int>(device) : std::nullopt);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return nullptr;
  }
}

void add_devices_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("devices", "List the Vulkan devices and the features kvbench uses");
  cmd->callback([&exit_code] {
    std::vector<DeviceInfo> devices;
    try {
      devices = list_devices();
    } catch (const std::exception& e) {
      std::cerr << "error: cannot enumerate Vulkan devices: " << e.what() << "\n";
      exit_code = 2;
      return;
    }
    if (devices.empty()) {
      std::cerr << "error: no Vulkan device (install mesa-vulkan-drivers for lavapipe: tools/setup.sh)\n";
      exit_code = 2;
      return;
    }
    // What a Runtime finds out by running (its probe of required subgroup sizes), for every
    // device that can run anything.
    for (auto& d : devices)
      if (!d.null_device) try {
          d = Runtime(d.index).info();
        } catch (const std::exception&) {  // reported as described; `kvbench run` says why
        }
    const int def = default_device_index(devices);
    auto yes = [](bool b) { return b ? "yes" : "no"; };
    for (const auto& d : devices) {
      std::cout << (d.index == def ? "* " : "  ") << d.index << ": " << d.name << " (" << d.type
                << ", Vulkan " << d.api_version << ", " << d.driver << ")"
                << (d.index == def ? "  [default]" : "") << "\n"
                << "      8-bit storage " << yes(d.storage_8bit) << ", 16-bit storage "
                << yes(d.storage_16bit) << ", int8 " << yes(d.shader_int8) << ", fp16 "
                << yes(d.shader_float16) << " (round to nearest even " << yes(d.f16_rte) << "), int64 "
                << yes(d.shader_int64) << ", fp64 " << yes(d.shader_float64) << "\n"
                << "      subgroup size " << d.subgroup_size << " (shuffle " << yes(d.subgroup_shuffle)
                << ", reductions " << yes(d.subgroup_arithmetic) << "), shared memory "
                << d.shared_memory_bytes / 1024 << " KiB, max storage buffer "
                << d.max_storage_buffer_range / (1024 * 1024) << " MiB, timestamps " << yes(d.timestamps)
                << "\n"
                << "      required subgroup sizes "
                << (d.subgroup_size_control
                        ? "yes (" + std::to_string(d.min_subgroup_size) + "-" +
                              std::to_string(d.max_subgroup_size) + " lanes, full subgroups)"
                    : d.subgroup_size_broken.empty() ? std::string("no")
                                                     : "promised but not kept: " + d.subgroup_size_broken)
                << ", inf/NaN preserved in f32 " << yes(d.inf_nan_preserve_f32)
                << ", f32 rounds to nearest even " << yes(d.rte_f32) << "\n"
                << "      compute units " << d.compute_units << " (" << d.compute_units_source
                << "), shader clock " << yes(d.shader_clock) << ", calibrated timestamps "
                << yes(d.calibrated_timestamps) << "\n"
                << "      memory: " << d.default_memory_mode()
                << (d.default_memory_mode() == "staging"
                        ? " (device-local buffers, copies through host-visible staging)"
                        : " (mapped device-local buffers, no copies)")
                << "\n";
    }
    std::cout
        << "The default is the first GPU, else the first device (lavapipe on a machine without a GPU).\n"
           "kvbench binds every tensor as 32-bit words, so no 8/16-bit storage feature is needed. The\n"
           "attention kernels: a CPU device (lavapipe) runs the cpu-shaped one (subgroups of at least 8\n"
           "lanes with shuffles), a GPU the decode kernel for decodes (subgroup reductions, 4-64 lanes\n"
           "required with full subgroups, heads up to 576/512) and the tiles kernel, which runs at any\n"
           "subgroup size, for the rest\n"
           "(KVBENCH_KERNEL=gpu|cpu|decode forces one); with fp16 rounding to nearest even the decode\n"
           "kernel dequantizes MHCA's codes in f16 (KVBENCH_F16_DEQUANT=0: in f32). A case whose needs\n"
           "the device lacks, or whose tensor exceeds the max storage buffer, is a SKIP with the reason.\n"
           "KVBENCH_STAGING=1 forces the staging memory mode (=0 zero-copy).\n";
    const std::string dir = default_cache_dir();
    std::cout << "Pipeline cache: "
              << (dir.empty() ? "none (set KVBENCH_CACHE_DIR, XDG_CACHE_HOME or HOME)" : dir)
              << (std::getenv("KVBENCH_PIPELINE_CACHE") &&
                          std::string(std::getenv("KVBENCH_PIPELINE_CACHE")) == "0"
                      ? " (off: KVBENCH_PIPELINE_CACHE=0)"
                      : "")
              << "\n  one file per device and driver build; clear it with rm -r of the directory,"
                 " turn it off with KVBENCH_PIPELINE_CACHE=0.\n";
  });
}

}  // namespace kvbench
