#include "sim/calibration/serving_run_config.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/core/error.h"
#include "sim/core/rng.h"

namespace servesim {
namespace {

constexpr double kNsPerS = 1e9;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// What a run sends: its workload section, the trace it names (if any) and each point's window.
struct RunPlan {
  nlohmann::json workload;
  std::vector<PlannedRequest> trace;
  std::vector<StageWindow> stages;
};

nlohmann::json fixed_tokens(std::int64_t tokens) {
  return {{"distribution", "fixed"}, {"tokens", tokens}};
}

// A workload whose lengths come from kServingTraceFile, with arrivals of its own.
nlohmann::json trace_lengths_workload(nlohmann::json arrival, std::int64_t requests) {
  return {{"arrival", std::move(arrival)},
          {"lengths", {{"distribution", "trace"}}},
          {"trace", {{"path", kServingTraceFile}}},
          {"num_requests", requests}};
}

std::int64_t capped(std::int64_t requests, const ServingRunOptions& options) {
  return options.max_requests_per_point ? std::min(requests, *options.max_requests_per_point)
                                        : requests;
}

// Load stages back to back, each cut to --max-requests-per-point requests. Every request is
// one of the system prompts plus a question: S + Q tokens, with Q such that S + Q is the
// measured mean prompt (the chat template adds about 30 tokens to the question), and O what each
// request generated: output_tokens_requested under ignore_eos, else the measured mean. Both are
// means over the run's stages weighted by requests sent, since one lengths section serves every
// stage.
RunPlan plan_load_stages(const ServingRun& run, const ServingRunOptions& options) {
  RunPlan plan;
  double prompt_sum = 0;
  double output_sum = 0;
  double weight_sum = 0;
  std::vector<double> durations_s;
  for (const ServingPoint& p : run.points) {
    const auto& s = std::get<LoadStage>(p.workload);
    const double weight = static_cast<double>(s.requests_sent);
    prompt_sum += s.prompt_tokens_mean * weight;
    output_sum += s.generated_output_tokens() * weight;
    weight_sum += weight;
    double duration_s = s.duration_s;
    if (options.max_requests_per_point) {
      duration_s =
          std::min(duration_s, static_cast<double>(*options.max_requests_per_point) / s.rate_per_s);
    }
    durations_s.push_back(duration_s);
  }
  const auto& first = std::get<LoadStage>(run.points.front().workload);
  const std::int64_t prompt_tokens = std::llround(prompt_sum / weight_sum);
  const std::int64_t system_tokens = first.system_prompt_tokens;
  const std::int64_t question_tokens = std::max<std::int64_t>(1, prompt_tokens - system_tokens);
  const std::int64_t output_tokens =
      std::max<std::int64_t>(1, std::llround(output_sum / weight_sum));

  nlohmann::json stages = nlohmann::json::array();
  std::int64_t start_ns = 0;
  for (std::size_t k = 0; k < run.points.size(); ++k) {
    const auto& s = std::get<LoadStage>(run.points[k].workload);
    const std::int64_t duration_ns = std::llround(durations_s[k] * kNsPerS);
    stages.push_back({{"rate_per_s", s.rate_per_s}, {"duration_s", durations_s[k]}});
    plan.stages.push_back({static_cast<double>(start_ns) / kNsPerS,
                           static_cast<double>(start_ns + duration_ns) / kNsPerS});
    // Constant arrivals: the first at the stage's start, then one every 1 / rate.
    const std::int64_t count =
        std::max<std::int64_t>(1, std::llround(s.rate_per_s * durations_s[k]));
    for (std::int64_t i = 0; i < count; ++i) {
      const auto offset_ns =
          static_cast<std::int64_t>(std::llround(static_cast<double>(i) * kNsPerS / s.rate_per_s));
      plan.trace.push_back({start_ns + std::min(offset_ns, duration_ns - 1),
                            system_tokens + question_tokens, output_tokens});
    }
    start_ns += duration_ns;
  }
  if (options.workload_keys == WorkloadKeys::Agreed) {
    plan.trace.clear();
    plan.workload = {{"arrival", {{"process", "constant"}, {"stages", stages}}},
                     {"lengths",
                      {{"distribution", "shared_prefix"},
                       {"groups", first.groups},
                       {"users_per_group", first.users_per_group},
                       {"system_prompt_tokens", system_tokens},
                       {"question_tokens", question_tokens},
                       {"output_tokens", output_tokens},
                       // inference-perf sends a fixed set of groups x users prompts, request i
                       // the (i mod users)-th: each user asks its own question every round.
                       {"questions", "per_user"}}}};
  } else {
    plan.workload = {{"arrival", {{"process", "trace"}}},
                     {"lengths", {{"distribution", "trace"}}},
                     {"trace", {{"path", kServingTraceFile}}}};
  }
  return plan;
}

RunPlan plan_static_batch(const StaticBatch& b) {
  RunPlan plan;
  plan.workload = {{"arrival", {{"process", "poisson"}, {"rate_per_s", "inf"}}},
                   {"lengths",
                    {{"distribution", "independent"},
                     {"prompt", fixed_tokens(b.input_tokens)},
                     {"output", fixed_tokens(b.output_tokens)}}},
                   {"num_requests", b.batch_size}};
  plan.stages.push_back({0, kInfinity});
  return plan;
}

// Output lengths as Anyscale's benchmark draws them: exponential, rounded, capped; at least 1.
RunPlan plan_burst(const BurstRequests& b, const ServingRunOptions& options) {
  RunPlan plan;
  const std::int64_t count = capped(b.num_requests, options);
  Rng rng = RngStreams(options.seed).stream("measured_output_lengths");
  for (std::int64_t i = 0; i < count; ++i) {
    const double drawn = rng.exponential(1.0 / b.output_tokens_mean);
    const std::int64_t tokens =
        std::clamp<std::int64_t>(std::llround(drawn), 1, b.max_output_tokens);
    plan.trace.push_back({0, b.prompt_tokens, tokens});
  }
  plan.workload = trace_lengths_workload({{"process", "poisson"}, {"rate_per_s", "inf"}}, count);
  plan.stages.push_back({0, kInfinity});
  return plan;
}

// The recorded lengths in order, with the arrival process of vllm bench serve: Poisson at the
// rate, gamma gaps of shape `burstiness` (cv = 1 / sqrt(burstiness)), all at once for "inf",
// or a closed loop of max_concurrency users when everything was sent at once under a limit;
// a limit with a finite rate is the arrival process's max_concurrency.
RunPlan plan_replay(const BenchReplay& r, const ServingRunOptions& options) {
  RunPlan plan;
  const auto count = capped(static_cast<std::int64_t>(r.requests.size()), options);
  for (std::int64_t i = 0; i < count; ++i) {
    const auto& lengths = r.requests[static_cast<std::size_t>(i)];
    plan.trace.push_back({0, lengths.prompt_tokens, lengths.output_tokens});
  }
  nlohmann::json arrival;
  if (r.max_concurrency && std::isinf(r.request_rate_per_s)) {
    arrival = {{"process", "closed_loop"}, {"users", *r.max_concurrency}};
  } else if (std::isinf(r.request_rate_per_s)) {
    arrival = {{"process", "poisson"}, {"rate_per_s", "inf"}};
  } else if (r.burstiness == 1.0) {
    arrival = {{"process", "poisson"}, {"rate_per_s", r.request_rate_per_s}};
  } else {
    arrival = {{"process", "gamma"},
               {"rate_per_s", r.request_rate_per_s},
               {"cv", 1.0 / std::sqrt(r.burstiness)}};
  }
  // Arrivals at the rate, at most max_concurrency in flight: vLLM's client-side limit.
  if (r.max_concurrency && !std::isinf(r.request_rate_per_s)) {
    arrival["max_concurrency"] = *r.max_concurrency;
  }
  plan.workload = trace_lengths_workload(std::move(arrival), count);
  plan.stages.push_back({0, kInfinity});
  return plan;
}

// vllm bench serve's closed loop: num_prompts requests (capped), each prompt and output length
// an integer uniform in [shortest, L] (stream measured_closed_loop_lengths, prompt then output
// for each request), sent by `concurrency` users with no think time.
RunPlan plan_closed_loop(const ClosedLoopRequests& c, const ServingRunOptions& options) {
  RunPlan plan;
  const std::int64_t count = capped(c.num_prompts, options);
  Rng rng = RngStreams(options.seed).stream("measured_closed_loop_lengths");
  const auto draw = [&](std::int64_t longest) {
    return rng.uniform_int(c.shortest(longest), longest);
  };
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t prompt = draw(c.input_tokens);
    const std::int64_t output = draw(c.output_tokens);
    plan.trace.push_back({0, prompt, output});
  }
  plan.workload =
      trace_lengths_workload({{"process", "closed_loop"}, {"users", c.concurrency}}, count);
  plan.stages.push_back({0, kInfinity});
  return plan;
}

RunPlan plan_run(const ServingRun& run, const ServingRunOptions& options) {
  if (run.points.empty()) throw InputError("serving run", "no points");
  const ServingPoint& p = run.points.front();
  if (std::holds_alternative<LoadStage>(p.workload)) return plan_load_stages(run, options);
  if (run.points.size() != 1) {
    throw InputError(p.where(), "only load stages run back to back in one simulation");
  }
  if (const auto* b = std::get_if<StaticBatch>(&p.workload)) return plan_static_batch(*b);
  if (const auto* b = std::get_if<BurstRequests>(&p.workload)) return plan_burst(*b, options);
  if (const auto* c = std::get_if<ClosedLoopRequests>(&p.workload)) {
    return plan_closed_loop(*c, options);
  }
  return plan_replay(std::get<BenchReplay>(p.workload), options);
}

// The engine: `engine.name` when the point names one. Without an engine, the scheduler that
// stands in for the engine the data was measured on: vLLM V1's for serving under load and
// replays, vLLM V0's for a burst (the 2023 data). The one place to change once engine
// profiles choose the scheduler themselves.
void add_engine(const ServingPoint& p, std::vector<ConfigOverride>& out,
                const std::string& origin) {
  for (const auto& [term, value] : p.engine_terms)
    out.push_back({origin, "engine." + term + "=" + value.dump()});
  if (p.engine) {
    out.push_back({origin, "engine.name=" + nlohmann::json(*p.engine).dump()});
  } else if (std::holds_alternative<LoadStage>(p.workload) ||
             std::holds_alternative<BenchReplay>(p.workload) ||
             std::holds_alternative<ClosedLoopRequests>(p.workload)) {
    out.push_back({origin, "scheduler.name=\"vllm_v1\""});
  } else if (std::holds_alternative<BurstRequests>(p.workload)) {
    out.push_back({origin, "scheduler.name=\"vllm\""});
  }
  // Static batches are run by the static scheduler whatever the engine: the throughput tables
  // of TensorRT-LLM measure fixed batches.
  if (const auto* b = std::get_if<StaticBatch>(&p.workload)) {
    out.push_back({origin, "scheduler.name=\"static\""});
    out.push_back({origin, "scheduler.batch_size=" + std::to_string(b->batch_size)});
  }
}

void add_knobs(const ServingPoint& p, std::vector<ConfigOverride>& out, const std::string& origin) {
  const EngineKnobs& k = p.knobs;
  const auto set = [&](const std::string& key, const nlohmann::json& value) {
    out.push_back({origin, key + "=" + value.dump()});
  };
  // The static scheduler has no sequence or token limit: a batch is what it runs.
  if (!std::holds_alternative<StaticBatch>(p.workload)) {
    if (k.max_num_seqs) set("scheduler.max_num_seqs", *k.max_num_seqs);
    if (k.max_num_batched_tokens) set(kSchedulerTokenLimitKey, *k.max_num_batched_tokens);
    if (k.batch_wait_timeout_iters) {
      set("scheduler.batch_wait_timeout_iters", *k.batch_wait_timeout_iters);
    }
    if (k.batch_wait_max_tokens_ratio) {
      set("scheduler.batch_wait_max_tokens_ratio", *k.batch_wait_max_tokens_ratio);
    }
  }
  if (k.max_model_len) set("max_len", *k.max_model_len);
  if (k.gpu_memory_utilization) set("memory.mem_util", *k.gpu_memory_utilization);
  if (k.block_size) set("allocator.block_size", *k.block_size);
  if (k.enable_prefix_caching) set("engine.enable_prefix_caching", *k.enable_prefix_caching);
  if (k.weight_dtype) set("weight_dtype", *k.weight_dtype);
  if (k.kv_dtype) set("kv_dtype", *k.kv_dtype);
  if (k.enable_expert_parallel) set("expert_parallel", *k.enable_expert_parallel);
  // vLLM's graph modes: FULL_DECODE_ONLY graphs decode-only steps and runs the rest eagerly;
  // the piecewise and full modes graph mixed steps too; NONE captures nothing.
  if (k.cudagraph_mode) {
    if (*k.cudagraph_mode == "NONE") {
      set("engine.cuda_graphs.capture_sizes", nlohmann::json::array());
    } else {
      set("engine.cuda_graphs.mixed_batches", *k.cudagraph_mode != "FULL_DECODE_ONLY");
    }
  }
}

}  // namespace

nlohmann::json serving_run_workload(const ServingRun& run, const ServingRunOptions& options) {
  return plan_run(run, options).workload;
}

ServingRunConfig serving_run_config(const ServingRun& run, const ServingRunOptions& options) {
  RunPlan plan = plan_run(run, options);
  const ServingPoint& p = run.points.front();
  const std::string origin = "--measured " + p.where();
  ServingRunConfig config;
  auto& out = config.overrides;
  out.push_back({origin, "model=" + nlohmann::json(p.model).dump()});
  out.push_back({origin, "hardware=" + nlohmann::json(p.hardware).dump()});
  out.push_back({origin, "tp=" + std::to_string(p.tp)});
  out.push_back({origin, "pp=" + std::to_string(p.pp)});
  add_engine(p, out, origin);
  add_knobs(p, out, origin);
  out.push_back({origin, "seed=" + std::to_string(options.seed)});
  // The predictions read the request records only.
  out.push_back({origin, "output.request_records=true"});
  out.push_back({origin, "output.iteration_records=false"});
  out.push_back({origin, "workload=" + plan.workload.dump()});
  out.insert(out.end(), options.extra_overrides.begin(), options.extra_overrides.end());
  config.trace = std::move(plan.trace);
  config.stages = std::move(plan.stages);
  config.gpus_per_replica = p.tp * p.pp;
  return config;
}

std::string serving_trace_csv(const std::vector<PlannedRequest>& requests) {
  std::string text = "arrival_time_s,prompt_tokens,output_tokens\n";
  text.reserve(text.size() + requests.size() * 32);
  char line[96];
  for (const PlannedRequest& r : requests) {
    std::snprintf(line, sizeof line, "%" PRId64 ".%09" PRId64 ",%" PRId64 ",%" PRId64 "\n",
                  r.arrival_ns / 1'000'000'000, r.arrival_ns % 1'000'000'000, r.prompt_tokens,
                  r.output_tokens);
    text += line;
  }
  return text;
}

}  // namespace servesim
