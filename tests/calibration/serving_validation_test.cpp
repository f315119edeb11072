#include <catch2/catch.hpp>

#include "sim/calibration/serving_prediction.h"
#include "sim/calibration/serving_validation.h"
#include "sim/core/error.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

ServingPoint measured_point(std::size_t row, double ttft_ms, double e2e_ms, bool overloaded) {
  ServingPoint p;
  p.source = "m.csv";
  p.row = row;
  p.model_name = "llama-2-7b";
  p.model = "llama-2-7b";
  p.hardware = "h100-sxm";
  LoadStage s;
  s.workload = "w";
  s.stage = 0;
  s.rate_per_s = 1;
  s.duration_s = 10;
  s.requests_sent = 10;
  s.requests_completed = overloaded ? 5 : 10;
  p.workload = s;
  p.measured[ServingMetric::TtftMs] = ttft_ms;
  p.measured[ServingMetric::E2eMs] = e2e_ms;
  p.measured.overloaded = overloaded;
  return p;
}

ServingMetrics predicted(double ttft_ms, double e2e_ms, bool overloaded) {
  ServingMetrics m;
  m[ServingMetric::TtftMs] = ttft_ms;
  m[ServingMetric::E2eMs] = e2e_ms;
  m[ServingMetric::ItlMs] = 1.0;  // not measured: not compared
  m.overloaded = overloaded;
  return m;
}

RequestRecord request(std::int64_t id, double arrival_s, double first_token_s, double completion_s,
                      std::int64_t prompt, std::int64_t output) {
  RequestRecord r;
  r.id = id;
  r.arrival_s = arrival_s;
  r.first_token_s = first_token_s;
  r.completion_s = completion_s;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

}  // namespace

TEST_CASE("relative error statistics on made-up numbers", "[serving_validation]") {
  // Relative errors +10%, -20%, +30%, -40%.
  const auto s = relative_error_stats({{110, 100}, {40, 50}, {13, 10}, {1.2, 2}});
  CHECK(s.count == 4);
  CHECK(s.mape == Approx(0.25));
  CHECK(s.median_ape == Approx(0.25));  // between 0.2 and 0.3
  CHECK(s.max_ape == Approx(0.40));
  CHECK(s.bias == Approx(-0.05));
  const auto odd = relative_error_stats({{110, 100}, {40, 50}, {13, 10}});
  CHECK(odd.median_ape == Approx(0.2));
  CHECK(relative_error_stats({}).count == 0);
}

TEST_CASE("overloaded points are kept out of the errors and reported apart",
          "[serving_validation]") {
  std::vector<ServingRun> runs;
  runs.push_back({{measured_point(1, 100, 1000, false), measured_point(2, 200, 2000, false)}});
  runs.push_back({{measured_point(3, 50000, 90000, true)}});
  runs.push_back({{measured_point(4, 10, 100, false)}});
  int calls = 0;
  const auto v = validate_serving(runs, [&](const ServingRun& run) -> std::vector<ServingMetrics> {
    ++calls;
    if (run.points.front().row == 1)
      return {predicted(110, 900, false), predicted(300, 2000, true)};
    if (run.points.front().row == 3) return {predicted(1, 1, true)};
    throw InfeasibleError("the model does not fit");
  });
  CHECK(calls == 3);
  REQUIRE(v.points.size() == 4);
  CHECK(v.not_predicted == 1);
  CHECK_THAT(v.points[3].not_predicted, Contains("not served") && Contains("does not fit"));
  CHECK(v.measured_overloaded == 1);
  CHECK(v.overloaded_predicted_overloaded == 1);
  CHECK(v.normal_predicted_overloaded == 1);
  REQUIRE(v.points[0].metrics.size() == 2);  // TTFT and E2E: the measured metrics
  CHECK(*v.points[0].metrics[0].relative_error == Approx(0.1));
  REQUIRE(v.metrics.size() == 2);
  CHECK(v.metrics[0].first == ServingMetric::TtftMs);
  const RelativeErrorStats& ttft = v.metrics[0].second;
  CHECK(ttft.count == 2);  // rows 1 and 2; the overloaded row 3 is left out
  CHECK(ttft.mape == Approx(0.3));
  CHECK(ttft.bias == Approx(0.3));
  CHECK(ttft.max_ape == Approx(0.5));
  const RelativeErrorStats& e2e = v.metrics[1].second;
  CHECK(e2e.mape == Approx(0.05));
  CHECK(e2e.bias == Approx(-0.05));

  const std::string csv = serving_validation_csv(v);
  CHECK_THAT(csv,
             Contains("m.csv,1,llama-2-7b,h100-sxm,1,1,,w,0,1,ttft_ms_mean,100,110,0.1,0,0,\n"));
  CHECK_THAT(csv, Contains(",1,1,\n"));  // row 3: measured and predicted overloaded
  CHECK_THAT(csv, Contains("not served: the model does not fit"));
  const auto json = serving_validation_to_json(v);
  CHECK(json.at("metrics").at("ttft_ms_mean").at("count") == 2);
  CHECK(json.at("overloaded").at("measured") == 1);
  CHECK(json.at("points").size() == 4);
}

TEST_CASE("stage metrics from request records: windows, ITL as the data computes it, overload",
          "[serving_validation]") {
  ServingPoint s0 = measured_point(1, 1, 1, false);
  ServingPoint s1 = measured_point(2, 1, 1, false);
  std::get<LoadStage>(s1.workload).stage = 1;
  const ServingRun run{{s0, s1}};
  ServingRunConfig config;
  config.stages = {{0, 10}, {10, 20}};
  // Stage 0: two requests, 10 and 20 output tokens; stage 1: three, one unfinished by t = 20
  // and one rejected, and a TTFT of 11 s for the late one.
  std::vector<RequestRecord> records = {
      request(0, 0.0, 0.1, 1.0, 100, 10),
      request(1, 5.0, 5.3, 7.2, 100, 20),
      request(2, 10.0, 10.2, 12.0, 100, 10),
      request(3, 12.0, 23.0, 25.0, 100, 10),
  };
  RequestRecord rejected = request(4, 15.0, 0, 0, 100, 10);
  rejected.rejected = true;
  records.push_back(rejected);
  const auto m = serving_metrics_from_records(run, config, records);
  REQUIRE(m.size() == 2);
  CHECK(*m[0][ServingMetric::TtftMs] == Approx(200.0));  // (0.1 + 0.3) / 2 s
  CHECK(*m[0][ServingMetric::E2eMs] == Approx(1600.0));  // (1.0 + 2.2) / 2 s
  // (0.9 + 1.9) s over (9 + 19) gaps = 100 ms.
  CHECK(*m[0][ServingMetric::ItlMs] == Approx(100.0));
  CHECK(*m[0][ServingMetric::OutputTokensPerS] == Approx(30 / 7.2));
  CHECK(*m[0][ServingMetric::CompletedShare] == Approx(1.0));
  CHECK_FALSE(m[0].overloaded);
  // Stage 1: 3 sent, 1 finished by t = 20: overloaded.
  CHECK(*m[1][ServingMetric::CompletedShare] == Approx(1.0 / 3));
  CHECK(*m[1][ServingMetric::TtftMs] == Approx((0.2 + 11.0) / 2 * 1000));
  CHECK(m[1].overloaded);

  // Under ignore_eos the engine generated 20 tokens a request where the client counted 16 (0.8
  // a token): ITL and throughput divide by the client's count, as the measured figures do.
  ServingPoint counted = measured_point(1, 1, 1, false);
  auto& c = std::get<LoadStage>(counted.workload);
  c.ignore_eos = true;
  c.output_tokens_requested = 20;
  c.output_tokens_mean = 16;
  ServingRunConfig one_stage;
  one_stage.stages = {{0, 10}};
  const auto k = serving_metrics_from_records(
      ServingRun{{counted}}, one_stage,
      {request(0, 0.0, 0.1, 2.0, 100, 20), request(1, 1.0, 1.1, 3.0, 100, 20)});
  // (1.9 + 1.9) s over 2 x (16 - 1) counted gaps.
  CHECK(*k[0][ServingMetric::ItlMs] == Approx(3.8 / 30 * 1000));
  CHECK(*k[0][ServingMetric::OutputTokensPerS] == Approx(32 / 3.0));
  CHECK(*k[0][ServingMetric::E2eMs] == Approx(2000.0));

  // A static batch: output tokens per second per GPU over the makespan.
  ServingPoint batch = measured_point(1, 1, 1, false);
  batch.workload = StaticBatch{2, 100, 10};
  ServingRunConfig batch_config;
  batch_config.stages = {{0, std::numeric_limits<double>::infinity()}};
  batch_config.gpus_per_replica = 2;
  const auto b = serving_metrics_from_records(
      ServingRun{{batch}}, batch_config,
      {request(0, 0, 0.5, 2.0, 100, 10), request(1, 0, 0.5, 4.0, 100, 10)});
  CHECK(*b[0][ServingMetric::OutputTokensPerSPerGpu] == Approx(20.0 / 4.0 / 2));
  CHECK_FALSE(b[0][ServingMetric::TtftMs]);
}

TEST_CASE("error bands keep measured / predicted of each point not measured overloaded",
          "[serving_validation]") {
  std::vector<ServingRun> runs;
  runs.push_back({{measured_point(1, 100, 1000, false), measured_point(2, 200, 2000, false)}});
  runs.push_back({{measured_point(3, 50000, 90000, true)}});
  runs[0].points[1].measured[ServingMetric::ItlMs] = 20;  // no TPOT: the band takes ITL
  const DeploymentClass light{"vllm", "hopper", "dense", "light"};
  const auto v = validate_serving(runs, [&](const ServingRun& run) {
    std::vector<ServingMetrics> out;
    for (std::size_t k = 0; k < run.points.size(); ++k) {
      ServingMetrics m = predicted(80, 1250, false);
      m[ServingMetric::ItlMs] = 16;
      m.in_flight_requests = 3.0 + static_cast<double>(k);
      m.deployment = light;
      out.push_back(m);
    }
    return out;
  });
  const auto bands = error_bands_of(v);
  REQUIRE(bands.size() == 1);
  const ErrorBands& vllm = bands.at("vllm");
  REQUIRE(vllm.residuals().size() == 2);  // row 3 was measured overloaded
  CHECK(vllm.files() == std::vector<std::string>{"m.csv"});
  const BandResidual& first = vllm.residuals()[0];
  CHECK(first.where == "m.csv row 1");
  CHECK(first.deployment == light);
  CHECK(first.in_flight_requests == 3.0);
  CHECK(*first.measured_over_predicted[0] == Approx(100.0 / 80));     // TTFT
  CHECK_FALSE(first.measured_over_predicted[1]);                      // no TPOT nor ITL
  CHECK(*first.measured_over_predicted[2] == Approx(1000.0 / 1250));  // E2E
  CHECK(*vllm.residuals()[1].measured_over_predicted[1] == Approx(20.0 / 16));
}
