#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/calibration/measurement.h"

namespace servesim {

// Importers for the measured profiles of microsoft/vidur (MIT licence), converted into
// servesim measurement records (times from milliseconds to seconds):
// - compute/<device>/<org>/<model>/mlp.csv: per layer and tensor-parallel shard, one gemm
//   record per row and projection (qkv, o, mlp_up, mlp_down) with M = num_tokens and N, K
//   from the model dimensions in the row and the TP degree (sharded as shard_model does);
// - attention.csv: decode_attention (is_prefill False) and prefill_attention records of one
//   shard (heads / TP); exact duplicate shapes keep their first row;
// - all_reduce.csv: all_reduce records of GPUs within one node (devices_per_node >=
//   num_workers); rows spanning nodes are skipped, as the profile has no inter-node link;
// - cpu_overheads.csv: host_overhead records, the sum of the schedule, sampler,
//   prepare_inputs and process_model_outputs medians per batch size.
// The table is recognised from its header; a missing column or a value that is not a number
// is an InputError naming the file, the line and the column.
std::vector<Measurement> import_vidur_csv(const std::filesystem::path& path,
                                          const std::string& device_name);

// True when the file's header is one of the tables above.
bool is_vidur_csv(const std::filesystem::path& path);

// The tables of one device under vidur's profiles folder (the one holding compute/,
// attention_history/, network/, cpu_overheads_history/): device is a folder name there,
// "a100" or "h100". Collectives come from network/<device>_dgx. Sorted; empty when none.
std::vector<std::filesystem::path> vidur_files_for_device(const std::filesystem::path& root,
                                                          const std::string& device);

}  // namespace servesim
