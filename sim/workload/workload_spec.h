#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/rng.h"
#include "sim/workload/arrival_stages.h"
#include "sim/workload/shared_prefix.h"
#include "sim/workload/workload_source.h"

namespace servesim {

enum class ArrivalProcessKind { Poisson, Gamma, Constant, ClosedLoop, Trace };
enum class TokenCountKind { Fixed, Uniform, Normal, Lognormal };
enum class LengthsKind { JointEmpirical, Trace, Independent, SharedPrefix, MultiTurn, Agentic };
enum class DurationKind { Fixed, Uniform, Exponential, Lognormal };

// The spellings used in workload JSON, in the order error messages list them.
inline constexpr std::array<std::pair<std::string_view, ArrivalProcessKind>, 5>
    kArrivalProcessNames{{{"poisson", ArrivalProcessKind::Poisson},
                          {"gamma", ArrivalProcessKind::Gamma},
                          {"constant", ArrivalProcessKind::Constant},
                          {"closed_loop", ArrivalProcessKind::ClosedLoop},
                          {"trace", ArrivalProcessKind::Trace}}};
inline constexpr std::array<std::pair<std::string_view, TokenCountKind>, 4> kTokenCountNames{{
    {"fixed", TokenCountKind::Fixed},
    {"uniform", TokenCountKind::Uniform},
    {"normal", TokenCountKind::Normal},
    {"lognormal", TokenCountKind::Lognormal},
}};
inline constexpr std::array<std::pair<std::string_view, LengthsKind>, 6> kLengthsNames{{
    {"joint_empirical", LengthsKind::JointEmpirical},
    {"trace", LengthsKind::Trace},
    {"independent", LengthsKind::Independent},
    {"shared_prefix", LengthsKind::SharedPrefix},
    {"multi_turn", LengthsKind::MultiTurn},
    {"agentic", LengthsKind::Agentic},
}};
inline constexpr std::array<std::pair<std::string_view, QuestionReuse>, 2> kQuestionReuseNames{{
    {"per_request", QuestionReuse::PerRequest},
    {"per_user", QuestionReuse::PerUser},
}};
inline constexpr std::array<std::pair<std::string_view, DurationKind>, 4> kDurationNames{{
    {"fixed", DurationKind::Fixed},
    {"uniform", DurationKind::Uniform},
    {"exponential", DurationKind::Exponential},
    {"lognormal", DurationKind::Lognormal},
}};

template <typename Kind, std::size_t N>
constexpr std::string_view name_of(const std::array<std::pair<std::string_view, Kind>, N>& names,
                                   Kind kind) {
  for (const auto& [name, value] : names) {
    if (value == kind) return name;
  }
  return "?";
}

struct ArrivalSpec {
  ArrivalProcessKind process = ArrivalProcessKind::Poisson;
  // poisson, gamma, constant. +infinity ("inf" in JSON) sends every request at t = 0.
  double rate_per_s = 1.0;
  double cv = 1.0;            // gamma: coefficient of variation of the inter-arrival gaps
  std::int64_t users = 1;     // closed_loop
  double think_time_s = 0.0;  // closed_loop: from a request's end to the user's next request
  // poisson, constant: load stages run back to back, each at its own rate (rate_per_s is then
  // unused). Empty for a single rate. The stages' total duration is the length of the run.
  std::vector<ArrivalStage> stages;
  // Open-loop processes: at most this many requests in flight, as vllm bench serve's
  // --max-concurrency (a client-side limit): a request whose arrival comes while the limit is
  // reached is sent when one in flight finishes, and its latencies count from then.
  std::optional<std::int64_t> max_concurrency;
  // trace: replay at this mean rate (JSON rate_per_s): every arrival time scaled by the rows'
  // recorded rate over this one, as trace.time_scale would; +infinity sends them all at t = 0.
  std::optional<double> replay_rate_per_s;
  bool operator==(const ArrivalSpec&) const = default;

  bool staged() const { return !stages.empty(); }
};

// One dimension (prompt or output) of independent lengths. JSON keys: tokens, mean, std, min,
// max. Continuous draws are rounded to whole tokens and clipped to [min, max].
struct TokenCountSpec {
  TokenCountKind distribution = TokenCountKind::Fixed;
  std::int64_t tokens = 1;  // fixed
  // normal, lognormal: mean and standard deviation of the distribution itself (for lognormal,
  // not of the underlying normal), before clipping.
  double mean_tokens = 1.0;
  double std_tokens = 0.0;
  std::int64_t min_tokens = 1;  // uniform (inclusive bounds), normal and lognormal (clip)
  std::int64_t max_tokens = 1;
  bool operator==(const TokenCountSpec&) const = default;
};

// A time drawn for each use (a user's think time, a tool's latency), in seconds. JSON keys:
// seconds (fixed), min_s and max_s (uniform; lognormal clip, min_s defaulting to 0), mean_s
// (exponential, lognormal) and std_s (lognormal: of the distribution itself, as for tokens).
struct DurationSpec {
  DurationKind distribution = DurationKind::Fixed;
  double seconds = 0.0;
  double mean_s = 0.0;
  double std_s = 0.0;
  double min_s = 0.0;
  double max_s = 0.0;
  bool operator==(const DurationSpec&) const = default;
};

// multi_turn and agentic: sessions of turns, each turn's prompt the whole session so far plus
// new input tokens, the next turn sent a gap after the previous one finished (session_source.h).
// The JSON names differ by kind (multi_turn / agentic), the model is one.
struct SessionSpec {
  TokenCountSpec turns;        // "turns" / "steps": tool calls, each session has steps + 1 turns
  TokenCountSpec first_input;  // "user" / "task": the first turn's new tokens
  TokenCountSpec next_input;   // "user" / "tool_result": the new tokens of every later turn
  TokenCountSpec output;       // "output" / "tool_call": every turn's output but the last
  TokenCountSpec last_output;  // "output" / "final_answer": the last turn's output
  DurationSpec gap;            // "think_time" / "tool_latency": a turn's end to the next turn
  std::int64_t system_prompt_tokens = 0;  // one system prompt shared by every session (>= 0)
  std::int64_t extra_turns = 0;           // agentic: 1, the answer after the last tool call
  bool operator==(const SessionSpec&) const = default;
};

struct LengthsSpec {
  LengthsKind distribution = LengthsKind::Independent;
  TokenCountSpec prompt;           // independent
  TokenCountSpec output;           // independent
  std::filesystem::path path;      // joint_empirical: CSV of (prompt, output) pairs, resolved
  SharedPrefixSpec shared_prefix;  // shared_prefix
  SessionSpec session;             // multi_turn, agentic
  // Sampled pairs that break a limit are drawn again (the vLLM benchmark's ShareGPT filter).
  std::optional<std::int64_t> max_prompt_tokens;
  std::optional<std::int64_t> max_total_tokens;
  bool operator==(const LengthsSpec&) const = default;
};

struct TraceSpec {
  std::filesystem::path path;  // resolved
  double time_scale = 1.0;     // multiplies arrival times: 2 stretches the trace to half the rate
  // Data rows [first_row, end_row) are replayed (0-based; end_row defaults to the trace's end);
  // with first_row > 0 arrivals count from the first row kept.
  std::int64_t first_row = 0;
  std::optional<std::int64_t> end_row;
  bool operator==(const TraceSpec&) const = default;
};

// A workload as read from workloads/<name>.json, validated. Immutable once parsed.
struct WorkloadSpec {
  std::string source_name;  // the file it came from, for error messages; not part of the JSON
  std::string description;
  std::string source;  // where the numbers come from
  ArrivalSpec arrival;
  LengthsSpec lengths;
  std::optional<TraceSpec> trace;  // when arrivals or lengths come from a trace
  // Stop conditions: at most num_requests requests, only those arriving in [0, duration_s).
  // Neither is allowed with arrival stages, whose durations define the run.
  std::optional<std::int64_t> num_requests;
  std::optional<double> duration_s;
  bool operator==(const WorkloadSpec&) const = default;

  // Every request at t = 0: only meaningful for the rate processes.
  bool all_at_once() const {
    return !arrival.staged() && std::isinf(arrival.rate_per_s) &&
           (arrival.process == ArrivalProcessKind::Poisson ||
            arrival.process == ArrivalProcessKind::Gamma ||
            arrival.process == ArrivalProcessKind::Constant);
  }
  bool sessions() const {
    return lengths.distribution == LengthsKind::MultiTurn ||
           lengths.distribution == LengthsKind::Agentic;
  }
  bool uses_trace() const {
    return arrival.process == ArrivalProcessKind::Trace ||
           lengths.distribution == LengthsKind::Trace;
  }
};

// Parses and validates a workload document; relative paths resolve against `base_dir`.
// Errors name `source_name` and the key path.
WorkloadSpec parse_workload_spec(const nlohmann::json& document, const std::string& source_name,
                                 const std::filesystem::path& base_dir);
// Reads a workload file; its relative paths resolve against the file's folder.
WorkloadSpec load_workload_file(const std::filesystem::path& path);
// The spec with every default filled in and paths resolved, as resolved_config.json records
// it; parse_workload_spec reads it back to an equal spec.
nlohmann::json workload_spec_to_json(const WorkloadSpec& spec);

// Builds the source a spec describes, reading its trace or lengths file (errors name the file
// and line). Arrival draws use the "arrivals" stream and length draws the "lengths" stream,
// so changing the length distribution leaves the arrival times of a seed unchanged.
std::unique_ptr<IWorkloadSource> make_workload_source(const WorkloadSpec& spec,
                                                      const RngStreams& streams);

}  // namespace servesim
