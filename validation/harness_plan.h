#pragma once

#include <filesystem>
#include <vector>

#include "validation/harness_options.h"
#include "validation/iterations_csv.h"
#include "validation/layer_shapes.h"
#include "validation/shapes.h"

namespace servesim::validation {

// What each subcommand will measure, worked out on the host before any device work, so
// that bad input (an unknown model, a TP degree that does not divide the heads, a broken
// iterations.csv) is reported the same way with or without a GPU.

// For every token count: the four layer GEMMs and the LM head at m = tokens.
struct GemmPlan {
  ModelShard shard;
  std::vector<GemmShape> gemms;
};
GemmPlan plan_gemms(const HarnessOptions& options, const std::filesystem::path& data_root);

// Decode attention for every (batch, context) pair, over a contiguous cache and, when the
// block size is positive, over a paged cache holding the same data; prefill attention for
// every (chunk, cached context) pair, batch 1.
struct AttentionPlan {
  ModelShard shard;
  std::vector<DecodeAttentionShape> decode;
  std::vector<PrefillAttentionShape> prefill;
};
AttentionPlan plan_attention(const HarnessOptions& options, const std::filesystem::path& data_root);

// The iterations to replay, spread evenly over the file, at most options.max_iterations.
struct ReplayPlan {
  ModelShard shard;
  std::vector<IterationRow> iterations;
  bool exact_shapes = false;
};
ReplayPlan plan_replay(const HarnessOptions& options, const std::filesystem::path& data_root);

}  // namespace servesim::validation
