#include "sim/workload/workload_spec.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <span>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/workload/arrival_process.h"
#include "sim/workload/workload_spec_reading.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

// Every optional key of each object, whichever kind uses it.
constexpr std::array<std::string_view, 5> kTokenCountKeys{"tokens", "mean", "std", "min", "max"};
constexpr std::array<std::string_view, 20> kLengthsKeys{"prompt",
                                                        "output",
                                                        "path",
                                                        "max_prompt_tokens",
                                                        "max_total_tokens",
                                                        "groups",
                                                        "users_per_group",
                                                        "system_prompt_tokens",
                                                        "question_tokens",
                                                        "output_tokens",
                                                        "questions",
                                                        "turns",
                                                        "user",
                                                        "think_time",
                                                        "task",
                                                        "steps",
                                                        "tool_call",
                                                        "tool_result",
                                                        "tool_latency",
                                                        "final_answer"};
constexpr std::array<std::string_view, 5> kDurationKeys{"seconds", "mean_s", "std_s", "min_s",
                                                        "max_s"};
// What a staged workload says of the keys a single rate or a run length would take.
constexpr std::string_view kStagesDefineRun =
    "arrival.stages: the stages' durations define the run (so --num-requests and --duration do "
    "not apply)";

// `fixed_key` names the value of a fixed count: "tokens" for lengths, "count" for turns.
TokenCountSpec parse_token_count(JsonObjectReader r, std::string_view fixed_key = "tokens") {
  TokenCountSpec t;
  t.distribution = read_choice(r, "distribution", kTokenCountNames);
  const std::string kind =
      "distribution \"" + std::string(name_of(kTokenCountNames, t.distribution)) + "\"";
  const std::array<std::string_view, 5> keys{fixed_key, kTokenCountKeys[1], kTokenCountKeys[2],
                                             kTokenCountKeys[3], kTokenCountKeys[4]};
  switch (t.distribution) {
    case TokenCountKind::Fixed:
      refuse_unused(r, keys, {fixed_key}, kind);
      t.tokens = r.positive_integer(fixed_key);
      break;
    case TokenCountKind::Uniform:
      refuse_unused(r, keys, {"min", "max"}, kind);
      t.min_tokens = r.positive_integer("min");
      t.max_tokens = r.positive_integer("max");
      break;
    case TokenCountKind::Normal:
    case TokenCountKind::Lognormal:
      refuse_unused(r, keys, {"mean", "std", "min", "max"}, kind);
      t.mean_tokens = r.positive_number("mean");
      t.std_tokens = r.number("std");
      if (t.std_tokens < 0) r.fail("std", "expected a standard deviation >= 0");
      t.min_tokens = r.optional_positive_integer("min").value_or(1);
      t.max_tokens = r.positive_integer("max");
      break;
  }
  if (t.min_tokens > t.max_tokens) {
    r.fail("min", "min (" + std::to_string(t.min_tokens) + ") exceeds max (" +
                      std::to_string(t.max_tokens) + ")");
  }
  r.reject_unknown_keys();
  return t;
}

// A time in [0, 1e9] s.
double read_seconds(JsonObjectReader& r, std::string_view key, bool positive) {
  const double value = positive ? r.positive_number(key) : r.number(key);
  if (!(value >= 0 && value <= kMaxArrivalTimeS)) r.fail(key, "expected a time in [0, 1e9] s");
  return value;
}

DurationSpec parse_duration(JsonObjectReader r) {
  DurationSpec d;
  d.distribution = read_choice(r, "distribution", kDurationNames);
  const std::string kind =
      "distribution \"" + std::string(name_of(kDurationNames, d.distribution)) + "\"";
  switch (d.distribution) {
    case DurationKind::Fixed:
      refuse_unused(r, kDurationKeys, {"seconds"}, kind);
      d.seconds = read_seconds(r, "seconds", false);
      break;
    case DurationKind::Uniform:
      refuse_unused(r, kDurationKeys, {"min_s", "max_s"}, kind);
      d.min_s = read_seconds(r, "min_s", false);
      d.max_s = read_seconds(r, "max_s", false);
      break;
    case DurationKind::Exponential:
      refuse_unused(r, kDurationKeys, {"mean_s"}, kind);
      d.mean_s = read_seconds(r, "mean_s", true);
      break;
    case DurationKind::Lognormal:
      refuse_unused(r, kDurationKeys, {"mean_s", "std_s", "min_s", "max_s"}, kind);
      d.mean_s = read_seconds(r, "mean_s", true);
      d.std_s = read_seconds(r, "std_s", false);
      d.min_s = r.has("min_s") ? read_seconds(r, "min_s", false) : 0.0;
      d.max_s = read_seconds(r, "max_s", false);
      break;
  }
  if (d.min_s > d.max_s) r.fail("min_s", "min_s exceeds max_s");
  r.reject_unknown_keys();
  return d;
}

// A length of a session, or its default where the kind has one.
TokenCountSpec session_count(JsonObjectReader& r, std::string_view key,
                             std::optional<TokenCountSpec> fallback,
                             std::string_view fixed_key = "tokens") {
  if (r.has(key) || !fallback) return parse_token_count(r.object(key), fixed_key);
  return *fallback;
}

TokenCountSpec lognormal_tokens(double mean, double std, std::int64_t min, std::int64_t max) {
  return TokenCountSpec{TokenCountKind::Lognormal, 1, mean, std, min, max};
}

SessionSpec parse_multi_turn(JsonObjectReader& r) {
  SessionSpec s;
  s.turns = parse_token_count(r.object("turns"), "count");
  s.first_input = parse_token_count(r.object("user"));
  s.next_input = s.first_input;
  s.output = parse_token_count(r.object("output"));
  s.last_output = s.output;
  if (r.has("think_time")) s.gap = parse_duration(r.object("think_time"));
  s.system_prompt_tokens = r.optional_nonnegative_integer("system_prompt_tokens").value_or(0);
  return s;
}

// The defaults of an agentic session (docs/workloads.md names their sources): TraceLab's coding
// agent trace (Zhu et al., 2026) for the tool calls per request and the output per step; the
// rest are assumptions, stated as such.
SessionSpec parse_agentic(JsonObjectReader& r) {
  SessionSpec s;
  s.extra_turns = 1;
  s.turns = session_count(r, "steps", lognormal_tokens(7.8, 29.4, 1, 100), "count");
  s.first_input = session_count(r, "task", lognormal_tokens(500, 500, 16, 8192));
  s.next_input = session_count(r, "tool_result", lognormal_tokens(2000, 4000, 1, 32768));
  s.output = session_count(r, "tool_call", lognormal_tokens(523, 1046, 1, 8192));
  s.last_output = session_count(r, "final_answer", lognormal_tokens(523, 1046, 1, 8192));
  s.gap = r.has("tool_latency") ? parse_duration(r.object("tool_latency"))
                                : DurationSpec{DurationKind::Lognormal, 0.0, 2.0, 6.0, 0.0, 600.0};
  s.system_prompt_tokens = r.optional_nonnegative_integer("system_prompt_tokens").value_or(2000);
  return s;
}

fs::path resolve_path(JsonObjectReader& r, std::string_view key, const fs::path& base_dir) {
  const fs::path path = r.string(key);
  if (path.empty()) r.fail(key, "expected a file path, got an empty string");
  return fs::absolute(path.is_relative() ? base_dir / path : path).lexically_normal();
}

SharedPrefixSpec parse_shared_prefix(JsonObjectReader& r) {
  SharedPrefixSpec p;
  p.groups = r.positive_integer("groups");
  p.users_per_group = r.positive_integer("users_per_group");
  p.system_prompt_tokens = r.positive_integer("system_prompt_tokens");
  p.question_tokens = r.positive_integer("question_tokens");
  p.output_tokens = r.positive_integer("output_tokens");
  if (r.has("questions")) p.questions = read_choice(r, "questions", kQuestionReuseNames);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (p.groups > kMax / p.users_per_group) {
    r.fail("users_per_group", "groups x users_per_group exceeds 2^63 - 1 users");
  }
  if (p.system_prompt_tokens > kMax - p.question_tokens) {
    r.fail("question_tokens", "system_prompt_tokens + question_tokens exceeds 2^63 - 1 tokens");
  }
  return p;
}

LengthsSpec parse_lengths(JsonObjectReader r, const fs::path& base_dir) {
  LengthsSpec l;
  l.distribution = read_choice(r, "distribution", kLengthsNames);
  const std::string kind =
      "distribution \"" + std::string(name_of(kLengthsNames, l.distribution)) + "\"";
  switch (l.distribution) {
    case LengthsKind::Independent:
      refuse_unused(r, kLengthsKeys, {"prompt", "output", "max_prompt_tokens", "max_total_tokens"},
                    kind);
      l.prompt = parse_token_count(r.object("prompt"));
      l.output = parse_token_count(r.object("output"));
      break;
    case LengthsKind::JointEmpirical:
      refuse_unused(r, kLengthsKeys, {"path", "max_prompt_tokens", "max_total_tokens"}, kind);
      l.path = resolve_path(r, "path", base_dir);
      break;
    case LengthsKind::Trace:
      // A trace's rows are replayed as recorded; filtering would part lengths from arrivals.
      refuse_unused(r, kLengthsKeys, {}, kind);
      break;
    case LengthsKind::SharedPrefix:
      // Every request has the same lengths: a filter would keep all of them or none.
      refuse_unused(r, kLengthsKeys,
                    {"groups", "users_per_group", "system_prompt_tokens", "question_tokens",
                     "output_tokens", "questions"},
                    kind);
      l.shared_prefix = parse_shared_prefix(r);
      break;
    case LengthsKind::MultiTurn:
      // A session's lengths follow from its turns: a filter would cut sessions apart.
      refuse_unused(r, kLengthsKeys,
                    {"turns", "user", "output", "think_time", "system_prompt_tokens"}, kind);
      l.session = parse_multi_turn(r);
      break;
    case LengthsKind::Agentic:
      refuse_unused(r, kLengthsKeys,
                    {"steps", "task", "tool_call", "tool_result", "tool_latency", "final_answer",
                     "system_prompt_tokens"},
                    kind);
      l.session = parse_agentic(r);
      break;
  }
  l.max_prompt_tokens = r.optional_positive_integer("max_prompt_tokens");
  l.max_total_tokens = r.optional_positive_integer("max_total_tokens");
  r.reject_unknown_keys();
  return l;
}

TraceSpec parse_trace(JsonObjectReader r, const fs::path& base_dir) {
  TraceSpec t;
  t.path = resolve_path(r, "path", base_dir);
  t.time_scale = r.optional_positive_number("time_scale").value_or(1.0);
  t.first_row = r.optional_nonnegative_integer("first_row").value_or(0);
  t.end_row = r.optional_positive_integer("end_row");
  if (t.end_row && *t.end_row <= t.first_row) {
    r.fail("end_row", "expected a row after first_row (" + std::to_string(t.first_row) +
                          "): the rows replayed are [first_row, end_row)");
  }
  r.reject_unknown_keys();
  return t;
}

}  // namespace

void refuse_unused(const JsonObjectReader& r, std::span<const std::string_view> all_keys,
                   std::initializer_list<std::string_view> used_keys, const std::string& kind) {
  for (const auto key : all_keys) {
    if (r.has(key) && std::find(used_keys.begin(), used_keys.end(), key) == used_keys.end()) {
      r.fail(key, "not used with " + kind);
    }
  }
}

WorkloadSpec parse_workload_spec(const nlohmann::json& document, const std::string& source_name,
                                 const fs::path& base_dir) {
  JsonObjectReader r(document, source_name);
  WorkloadSpec spec;
  spec.source_name = source_name;
  spec.description = r.optional_string("description").value_or("");
  spec.source = r.optional_string("source").value_or("");
  spec.arrival = parse_arrival(r.object("arrival"));
  spec.lengths = parse_lengths(r.object("lengths"), base_dir);
  if (auto trace = r.optional_object("trace")) spec.trace = parse_trace(*trace, base_dir);
  spec.num_requests = r.optional_positive_integer("num_requests");
  spec.duration_s = r.optional_positive_number("duration_s");
  if (spec.duration_s && *spec.duration_s > kMaxArrivalTimeS) {
    r.fail("duration_s", "expected at most 1e9 s (31.7 years), the longest simulated time");
  }
  if (spec.arrival.staged()) {
    for (const std::string_view key : {"num_requests", "duration_s"}) {
      if (r.has(key)) r.fail(key, "not used with " + std::string(kStagesDefineRun));
    }
  }
  r.reject_unknown_keys();

  if (spec.arrival.max_concurrency && spec.sessions()) {
    throw InputError(source_name,
                     "arrival.max_concurrency: not used with sessions (multi_turn, agentic), "
                     "whose turns wait for each other already");
  }
  if (spec.uses_trace() && !spec.trace) {
    r.fail("trace", "required when arrival.process or lengths.distribution is \"trace\"");
  }
  if (!spec.uses_trace() && spec.trace) {
    r.fail("trace", "given, but neither arrival.process nor lengths.distribution is \"trace\"");
  }
  if (spec.arrival.replay_rate_per_s && spec.trace && spec.trace->time_scale != 1.0) {
    r.fail("trace.time_scale",
           "not used with arrival.rate_per_s, which rescales the trace's arrivals itself "
           "(give one of them)");
  }
  // A trace and a list of stages end by themselves; other synthetic arrivals would go on for
  // ever.
  if (!spec.uses_trace() && !spec.arrival.staged() && !spec.num_requests) {
    if (spec.all_at_once()) {
      r.fail("num_requests",
             "required when arrival.rate_per_s is \"inf\" (every request arrives at t = 0)");
    }
    if (!spec.duration_s) {
      throw InputError(
          source_name,
          "synthetic arrivals need a stop condition: num_requests, duration_s or both");
    }
  }
  return spec;
}

WorkloadSpec load_workload_file(const fs::path& path) {
  const fs::path base_dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  return parse_workload_spec(read_json_file(path), path.string(), base_dir);
}

}  // namespace servesim
