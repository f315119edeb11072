#include <catch2/catch.hpp>

#include <map>

#include "sim/calibration/serving_run_config.h"
#include "sim/core/error.h"

using namespace servesim;

namespace {

ServingPoint deployment() {
  ServingPoint p;
  p.source = "m.csv";
  p.row = 1;
  p.model_name = "meta-llama/Llama-2-7b-hf";
  p.model = "llama-2-7b";
  p.hardware = "h100-sxm";
  p.tp = 1;
  p.knobs.max_num_seqs = 128;
  p.knobs.max_num_batched_tokens = 2048;
  p.knobs.max_model_len = 4096;
  p.knobs.gpu_memory_utilization = 0.9;
  p.knobs.block_size = 16;
  p.knobs.enable_prefix_caching = true;
  return p;
}

ServingPoint stage(std::int64_t number, double rate, double prompt_mean, double output_mean,
                   std::int64_t sent) {
  ServingPoint p = deployment();
  p.row = static_cast<std::size_t>(number + 1);
  LoadStage s;
  s.workload = "codegen";
  s.stage = number;
  s.rate_per_s = rate;
  s.duration_s = 600;
  s.groups = 11;
  s.users_per_group = 4;
  s.system_prompt_tokens = 100;
  s.question_tokens = 466;
  s.prompt_tokens_mean = prompt_mean;
  s.output_tokens_mean = output_mean;
  s.requests_sent = sent;
  s.requests_completed = sent;
  p.workload = s;
  return p;
}

// key -> value text of each override, the last one winning.
std::map<std::string, std::string> assignments(const ServingRunConfig& config) {
  std::map<std::string, std::string> out;
  for (const auto& o : config.overrides) {
    const auto eq = o.assignment.find('=');
    out[o.assignment.substr(0, eq)] = o.assignment.substr(eq + 1);
  }
  return out;
}

}  // namespace

TEST_CASE("two load stages map to one run with the agreed engine and workload keys",
          "[serving_run_config]") {
  ServingRun run{{stage(0, 5, 592, 194, 3000), stage(1, 10, 592, 196, 6000)}};
  for (auto& p : run.points)
    p.engine = "vllm";
  ServingRunOptions options;
  options.workload_keys = WorkloadKeys::Agreed;
  const ServingRunConfig config = serving_run_config(run, options);
  const auto a = assignments(config);
  CHECK(a.at("model") == "\"llama-2-7b\"");
  CHECK(a.at("hardware") == "\"h100-sxm\"");
  CHECK(a.at("tp") == "1");
  CHECK(a.at("max_len") == "4096");
  CHECK(a.at("memory.mem_util") == "0.9");
  CHECK(a.at("allocator.block_size") == "16");
  CHECK(a.at("scheduler.max_num_seqs") == "128");
  CHECK(a.at(kSchedulerTokenLimitKey) == "2048");
  CHECK(a.at("engine.enable_prefix_caching") == "true");
  CHECK(a.at("engine.name") == "\"vllm\"");
  CHECK(a.count("scheduler.name") == 0);  // the engine chooses its scheduler
  CHECK(config.overrides.front().origin == "--measured m.csv row 1");

  const auto workload = nlohmann::json::parse(a.at("workload"));
  // S + Q = the measured prompt mean over both stages weighted by requests (592); O likewise:
  // (194 x 3000 + 196 x 6000) / 9000 = 195.3 -> 195.
  const nlohmann::json expected = {{"arrival",
                                    {{"process", "constant"},
                                     {"stages",
                                      {{{"rate_per_s", 5.0}, {"duration_s", 600.0}},
                                       {{"rate_per_s", 10.0}, {"duration_s", 600.0}}}}}},
                                   {"lengths",
                                    {{"distribution", "shared_prefix"},
                                     {"groups", 11},
                                     {"users_per_group", 4},
                                     {"system_prompt_tokens", 100},
                                     {"question_tokens", 492},
                                     {"output_tokens", 195},
                                     {"questions", "per_user"}}}};
  CHECK(workload == expected);
  CHECK(config.trace.empty());
  REQUIRE(config.stages.size() == 2);
  CHECK(config.stages[0].start_s == 0);
  CHECK(config.stages[0].end_s == 600);
  CHECK(config.stages[1].start_s == 600);
  CHECK(config.stages[1].end_s == 1200);
}

TEST_CASE("under ignore_eos each request generates the requested output, not the client's count",
          "[serving_run_config]") {
  ServingRun run{{stage(0, 5, 592, 194, 3000), stage(1, 10, 592, 196, 6000)}};
  for (auto& p : run.points) {
    auto& s = std::get<LoadStage>(p.workload);
    s.ignore_eos = true;
    s.output_tokens_requested = 247;
  }
  ServingRunOptions options;
  options.workload_keys = WorkloadKeys::Agreed;
  const auto workload =
      nlohmann::json::parse(assignments(serving_run_config(run, options)).at("workload"));
  CHECK(workload.at("lengths").at("output_tokens") == 247);
  const auto& s0 = std::get<LoadStage>(run.points[0].workload);
  CHECK(s0.generated_output_tokens() == 247);
  CHECK(s0.counted_per_generated_token() == Approx(194.0 / 247.0));
}

TEST_CASE("with the existing keys the same stages are a trace of constant arrivals",
          "[serving_run_config]") {
  const ServingRun run{{stage(0, 5, 592, 194, 3000), stage(1, 10, 592, 196, 6000)}};
  ServingRunOptions options;
  options.workload_keys = WorkloadKeys::Existing;
  options.max_requests_per_point = 20;  // each stage cut to 20 requests: 4 s, then 2 s
  const ServingRunConfig config = serving_run_config(run, options);
  const auto a = assignments(config);
  // No engine: vLLM V1's scheduler stands in for it.
  CHECK(a.at("scheduler.name") == "\"vllm_v1\"");
  CHECK(a.count("engine.name") == 0);
  const auto workload = nlohmann::json::parse(a.at("workload"));
  CHECK(workload.at("arrival").at("process") == "trace");
  CHECK(workload.at("trace").at("path") == kServingTraceFile);
  REQUIRE(config.trace.size() == 40);
  CHECK(config.trace[0].arrival_ns == 0);
  CHECK(config.trace[1].arrival_ns == 200'000'000);
  CHECK(config.trace[20].arrival_ns == 4'000'000'000);
  CHECK(config.trace[21].arrival_ns == 4'100'000'000);
  CHECK(config.trace[39].prompt_tokens == 592);
  CHECK(config.trace[39].output_tokens == 195);
  REQUIRE(config.stages.size() == 2);
  CHECK(config.stages[1].start_s == 4.0);
  CHECK(config.stages[1].end_s == 6.0);
  CHECK(serving_trace_csv({config.trace[0], config.trace[21]}) ==
        "arrival_time_s,prompt_tokens,output_tokens\n0.000000000,592,195\n4.100000000,592,195\n");
}

TEST_CASE("a static batch maps to the static scheduler at t = 0", "[serving_run_config]") {
  ServingPoint p = deployment();
  p.engine = "trtllm";
  p.tp = 2;
  p.knobs = {};
  p.knobs.weight_dtype = "fp8";
  p.knobs.max_num_seqs = 64;  // not a key of the static scheduler: left out
  p.workload = StaticBatch{512, 128, 2048};
  const ServingRunConfig config = serving_run_config(ServingRun{{p}}, {});
  const auto a = assignments(config);
  CHECK(a.at("engine.name") == "\"trtllm\"");
  CHECK(a.at("scheduler.name") == "\"static\"");
  CHECK(a.at("scheduler.batch_size") == "512");
  CHECK(a.at("weight_dtype") == "\"fp8\"");
  CHECK(a.count("scheduler.max_num_seqs") == 0);
  CHECK(config.gpus_per_replica == 2);
  const auto workload = nlohmann::json::parse(a.at("workload"));
  CHECK(workload.at("arrival") == nlohmann::json({{"process", "poisson"}, {"rate_per_s", "inf"}}));
  CHECK(workload.at("lengths").at("prompt").at("tokens") == 128);
  CHECK(workload.at("lengths").at("output").at("tokens") == 2048);
  CHECK(workload.at("num_requests") == 512);
  CHECK(config.trace.empty());
}

TEST_CASE("a burst draws capped exponential outputs, the same for a seed", "[serving_run_config]") {
  ServingPoint p = deployment();
  p.knobs = {};
  p.workload = BurstRequests{1000, 512, 128, 32};
  const ServingRun run{{p}};
  const ServingRunConfig config = serving_run_config(run, {});
  CHECK(assignments(config).at("scheduler.name") == "\"vllm\"");
  REQUIRE(config.trace.size() == 1000);
  double mean = 0;
  for (const auto& r : config.trace) {
    CHECK(r.arrival_ns == 0);
    CHECK(r.prompt_tokens == 512);
    CHECK(r.output_tokens >= 1);
    CHECK(r.output_tokens <= 32);
    mean += static_cast<double>(r.output_tokens) / 1000;
  }
  // E[min(X, 32)] = 128 (1 - exp(-1/4)) = 28.3 for X exponential with mean 128.
  CHECK(mean > 26);
  CHECK(mean < 31);
  CHECK(serving_run_config(run, {}).trace[7].output_tokens == config.trace[7].output_tokens);
  ServingRunOptions few;
  few.max_requests_per_point = 10;
  CHECK(serving_run_config(run, few).trace.size() == 10);
}

TEST_CASE("a replay keeps vLLM's arrival process", "[serving_run_config]") {
  ServingPoint p = deployment();
  BenchReplay r;
  r.requests = {{10, 5}, {20, 10}};
  r.request_rate_per_s = 4;
  r.burstiness = 0.25;
  p.workload = r;
  auto workload = serving_run_workload(ServingRun{{p}}, {});
  CHECK(workload.at("arrival") ==
        nlohmann::json({{"process", "gamma"}, {"rate_per_s", 4.0}, {"cv", 2.0}}));
  CHECK(workload.at("lengths").at("distribution") == "trace");
  CHECK(workload.at("num_requests") == 2);
  r.request_rate_per_s = std::numeric_limits<double>::infinity();
  r.max_concurrency = 8;
  p.workload = r;
  workload = serving_run_workload(ServingRun{{p}}, {});
  CHECK(workload.at("arrival") == nlohmann::json({{"process", "closed_loop"}, {"users", 8}}));
  // A limit with a finite rate: arrivals at the rate, at most 8 in flight.
  r.request_rate_per_s = 4;
  r.burstiness = 1;
  p.workload = r;
  workload = serving_run_workload(ServingRun{{p}}, {});
  CHECK(workload.at("arrival") ==
        nlohmann::json({{"process", "poisson"}, {"rate_per_s", 4.0}, {"max_concurrency", 8}}));
}
