#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/model/dtype.h"

namespace servesim {

// Achieved fractions of the datasheet ceilings: real kernels never reach peak, and how far
// they stay below it is what calibration measures.
struct Efficiency {
  double gemm_compute = 0.7;       // large dense matrix multiplies
  double attention_compute = 0.5;  // fused attention kernels (FlashAttention-style)
  double memory_bandwidth = 0.75;  // streaming reads and writes of HBM
  double gpu_link = 0.7;           // collective bus bandwidth over the GPU link
  double host_link = 0.8;          // copies between device and host memory
};

// Fixed costs the roofline misses.
struct Overheads {
  double kernel_launch_s = 2e-6;       // per kernel: launch gap and tail effects
  double iteration_s = 1e-3;           // per iteration: scheduling, input preparation, sampling
  double per_sequence_s = 4e-5;        // per running sequence and iteration (CPU bookkeeping)
  double collective_latency_s = 3e-5;  // per collective call (the alpha of alpha-beta)
};

// One accelerator, as loaded from hw_profiles/<name>.json. All rates are SI decimal.
struct HardwareProfile {
  std::string name;
  std::string description;
  std::string source;  // file it was read from

  double memory_capacity_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;
  // Dense (no sparsity) peak per numeric format; 0 where the device has no such unit.
  std::array<double, 6> peak_flops_per_s{};
  double gpu_link_bandwidth_bytes_per_s = 0;   // per direction, GPU to GPU
  double host_link_bandwidth_bytes_per_s = 0;  // per direction, GPU to host
  double runtime_reserved_bytes = 0;           // CUDA context, library workspaces, graphs: never KV
  std::optional<double> price_per_gpu_hour_usd;
  Efficiency efficiency;
  Overheads overheads;
  // Where each number comes from, keyed by its dotted path in the file.
  std::map<std::string, std::string> sources;

  double peak_flops(DType dtype) const { return peak_flops_per_s[static_cast<std::size_t>(dtype)]; }
  bool supports(DType dtype) const { return peak_flops(dtype) > 0; }
};

HardwareProfile load_hardware_file(const std::filesystem::path& path);
HardwareProfile hardware_from_json(const nlohmann::json& document, const std::string& source_name);
nlohmann::json hardware_to_json(const HardwareProfile& profile);

}  // namespace servesim
