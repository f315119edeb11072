#include "sim/workload/workload_spec.h"

#include <cmath>

namespace servesim {
namespace {

using nlohmann::json;

template <typename Kind, std::size_t N>
std::string name(const std::array<std::pair<std::string_view, Kind>, N>& names, Kind kind) {
  return std::string(name_of(names, kind));
}

json arrival_to_json(const ArrivalSpec& a) {
  json out{{"process", name(kArrivalProcessNames, a.process)}};
  switch (a.process) {
    case ArrivalProcessKind::Poisson:
    case ArrivalProcessKind::Constant:
    case ArrivalProcessKind::Gamma:
      if (a.staged()) {
        json stages = json::array();
        for (const ArrivalStage& stage : a.stages) {
          stages.push_back({{"rate_per_s", stage.rate_per_s}, {"duration_s", stage.duration_s}});
        }
        out["stages"] = std::move(stages);
        break;
      }
      out["rate_per_s"] = std::isinf(a.rate_per_s) ? json("inf") : json(a.rate_per_s);
      if (a.process == ArrivalProcessKind::Gamma) out["cv"] = a.cv;
      break;
    case ArrivalProcessKind::ClosedLoop:
      out["users"] = a.users;
      out["think_time_s"] = a.think_time_s;
      break;
    case ArrivalProcessKind::Trace:
      if (const auto rate = a.replay_rate_per_s) {
        out["rate_per_s"] = std::isinf(*rate) ? json("inf") : json(*rate);
      }
      break;
  }
  if (a.max_concurrency) out["max_concurrency"] = *a.max_concurrency;
  return out;
}

json token_count_to_json(const TokenCountSpec& t, const char* fixed_key = "tokens") {
  json out{{"distribution", name(kTokenCountNames, t.distribution)}};
  switch (t.distribution) {
    case TokenCountKind::Fixed:
      out[fixed_key] = t.tokens;
      break;
    case TokenCountKind::Normal:
    case TokenCountKind::Lognormal:
      out["mean"] = t.mean_tokens;
      out["std"] = t.std_tokens;
      [[fallthrough]];
    case TokenCountKind::Uniform:
      out["min"] = t.min_tokens;
      out["max"] = t.max_tokens;
      break;
  }
  return out;
}

json duration_to_json(const DurationSpec& d) {
  json out{{"distribution", name(kDurationNames, d.distribution)}};
  switch (d.distribution) {
    case DurationKind::Fixed:
      out["seconds"] = d.seconds;
      break;
    case DurationKind::Exponential:
      out["mean_s"] = d.mean_s;
      break;
    case DurationKind::Lognormal:
      out["mean_s"] = d.mean_s;
      out["std_s"] = d.std_s;
      [[fallthrough]];
    case DurationKind::Uniform:
      out["min_s"] = d.min_s;
      out["max_s"] = d.max_s;
      break;
  }
  return out;
}

json lengths_to_json(const LengthsSpec& l) {
  json out{{"distribution", name(kLengthsNames, l.distribution)}};
  switch (l.distribution) {
    case LengthsKind::Independent:
      out["prompt"] = token_count_to_json(l.prompt);
      out["output"] = token_count_to_json(l.output);
      break;
    case LengthsKind::JointEmpirical:
      out["path"] = l.path.string();
      break;
    case LengthsKind::SharedPrefix:
      out["groups"] = l.shared_prefix.groups;
      out["users_per_group"] = l.shared_prefix.users_per_group;
      out["system_prompt_tokens"] = l.shared_prefix.system_prompt_tokens;
      out["question_tokens"] = l.shared_prefix.question_tokens;
      out["output_tokens"] = l.shared_prefix.output_tokens;
      out["questions"] = name(kQuestionReuseNames, l.shared_prefix.questions);
      break;
    case LengthsKind::MultiTurn:
      out["turns"] = token_count_to_json(l.session.turns, "count");
      out["user"] = token_count_to_json(l.session.first_input);
      out["output"] = token_count_to_json(l.session.output);
      out["think_time"] = duration_to_json(l.session.gap);
      out["system_prompt_tokens"] = l.session.system_prompt_tokens;
      break;
    case LengthsKind::Agentic:
      out["steps"] = token_count_to_json(l.session.turns, "count");
      out["task"] = token_count_to_json(l.session.first_input);
      out["tool_result"] = token_count_to_json(l.session.next_input);
      out["tool_call"] = token_count_to_json(l.session.output);
      out["final_answer"] = token_count_to_json(l.session.last_output);
      out["tool_latency"] = duration_to_json(l.session.gap);
      out["system_prompt_tokens"] = l.session.system_prompt_tokens;
      break;
    case LengthsKind::Trace:
      break;
  }
  if (l.max_prompt_tokens) out["max_prompt_tokens"] = *l.max_prompt_tokens;
  if (l.max_total_tokens) out["max_total_tokens"] = *l.max_total_tokens;
  return out;
}

}  // namespace

json workload_spec_to_json(const WorkloadSpec& spec) {
  json out{{"description", spec.description},
           {"source", spec.source},
           {"arrival", arrival_to_json(spec.arrival)},
           {"lengths", lengths_to_json(spec.lengths)}};
  if (spec.trace) {
    out["trace"] = {{"path", spec.trace->path.string()}, {"time_scale", spec.trace->time_scale}};
    if (spec.trace->first_row > 0) out["trace"]["first_row"] = spec.trace->first_row;
    if (spec.trace->end_row) out["trace"]["end_row"] = *spec.trace->end_row;
  }
  if (spec.num_requests) out["num_requests"] = *spec.num_requests;
  if (spec.duration_s) out["duration_s"] = *spec.duration_s;
  return out;
}

}  // namespace servesim
