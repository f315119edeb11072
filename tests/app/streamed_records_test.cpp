// run --out writes requests.csv and iterations.csv as the run goes (CsvRecordWriter behind
// RecordOrder) and draws its figures from what the records reduce to (RunFigureData); a run
// that keeps its records writes them afterwards, sorted (CsvReporter), and `servesim plot`
// draws the figures from the files. Each pair must agree byte for byte.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/metrics/impl/csv_reporter.h"
#include "sim/metrics/impl/record_order.h"
#include "sim/study/run_plots.h"
#include "tests/support/test_support.h"

namespace {

nlohmann::json document(const std::vector<std::string>& sets) {
  servesim::ConfigSources sources;
  for (const auto& set : sets)
    sources.overrides.push_back({"--set", set});
  return servesim::assemble_config(sources, servesim::test::source_dir());
}

// The files of a folder with these extensions, by name.
std::map<std::string, std::string> files_of(const std::filesystem::path& dir,
                                            const std::vector<std::string>& extensions) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    for (const auto& extension : extensions) {
      if (entry.path().extension() == extension)
        files[entry.path().filename().string()] = servesim::test::read_file(entry.path());
    }
  }
  return files;
}

}  // namespace

TEST_CASE("records streamed as the run goes equal the records kept and sorted after it",
          "[app][metrics]") {
  const servesim::test::ScratchDir scratch("streamed_records");
  const std::map<std::string, std::vector<std::string>> cases{
      // The default engine (V1, prefix caching, planning ahead) over many replicas under
      // load: decode runs report their later iterations when they end, interleaved.
      {"default_engine",
       {"replicas=6", "workload.num_requests=1500", "workload.arrival.rate_per_s=90"}},
      // Preemption under memory pressure, with runs cut and resumed.
      {"preemption",
       {"replicas=2", "workload.num_requests=600", "workload.arrival.rate_per_s=60",
        "memory.kv_capacity_tokens=12000"}},
      // Plain iterations, one at a time.
      {"no_bulk_decode",
       {"replicas=3", "workload.num_requests=500", "workload.arrival.rate_per_s=30",
        "engine.bulk_decode=false"}},
      // Several batches in flight (pipeline stages), no decode runs.
      {"pipeline",
       {"model=\"llama-2-70b\"", "tp=2", "pp=2", "replicas=2", "workload.num_requests=300",
        "workload.arrival.rate_per_s=8"}},
      // Speculative decoding: bursts of tokens, bulk decoding off.
      {"speculative",
       {"replicas=2", "workload.num_requests=300", "workload.arrival.rate_per_s=12",
        "speculative={\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
        "\"acceptance_rate\": 0.6}"}},
      // Data-parallel attention and expert parallelism on an MoE model.
      {"dp_ep",
       {"model=\"qwen3-30b-a3b\"", "data_parallel=2", "expert_parallel=true",
        "workload.num_requests=300", "workload.arrival.rate_per_s=12"}},
      // TTFT parts in requests.csv, and two pools.
      {"disaggregated",
       {"disaggregation.prefill.replicas=1", "disaggregation.decode.replicas=2",
        "workload.num_requests=300", "workload.arrival.rate_per_s=10"}},
  };
  // Streamed on the run's thread, and on a thread of its own (BackgroundRecordSink), as
  // `run --out` does on a machine of more than one core.
  const bool background = GENERATE(false, true);
  for (const auto& [name, sets] : cases) {
    INFO(name << (background ? ", records in the background" : ""));
    const nlohmann::json config = document(sets);
    const std::string run = name + (background ? "_background" : "");
    const auto streamed = scratch.path() / (run + "_streamed");
    const auto kept = scratch.path() / (run + "_kept");
    std::filesystem::create_directories(streamed);
    std::filesystem::create_directories(kept);

    servesim::CsvRecordWriter writer(servesim::RecordFiles::in(streamed, true));
    servesim::RunFigureData figures;
    servesim::SimulationOptions options;
    options.record_sinks = {&writer, &figures};
    options.records_in_background = background;
    const servesim::SimulationOutcome outcome = servesim::run_simulation(
        config, servesim::test::source_dir(), std::filesystem::current_path(), options);
    REQUIRE(outcome.result.summary.requests_completed > 0);
    servesim::write_run_outputs(outcome, kept, {.requests_jsonl = true, .records = true});

    const auto a = files_of(streamed, {".csv", ".jsonl"});
    const auto b = files_of(kept, {".csv", ".jsonl"});
    REQUIRE(a.size() == 3);
    REQUIRE(b.size() == 3);
    for (const auto& [file, text] : b) {
      INFO(file);
      REQUIRE(a.count(file) == 1);
      CHECK(a.at(file) == text);
    }
    if (name == "disaggregated")
      CHECK(a.at("requests.csv").find("ttft_transfer_s") != std::string::npos);

    const auto from_records = servesim::write_run_figures(streamed, figures);
    const auto memory_figures = files_of(streamed, {".dat", ".gp"});
    servesim::write_run_figures(kept);
    const auto file_figures = files_of(kept, {".dat", ".gp"});
    CHECK(from_records.size() >= 3);
    CHECK(memory_figures.size() == file_figures.size());
    for (const auto& [file, text] : file_figures) {
      INFO(file);
      REQUIRE(memory_figures.count(file) == 1);
      CHECK(memory_figures.at(file) == text);
    }
  }
}

TEST_CASE("record order passes requests by id and iterations by start, then replica", "[metrics]") {
  struct Seen final : servesim::IRecordSink {
    std::vector<std::int64_t> requests;
    std::vector<std::pair<double, std::int32_t>> iterations;
    bool finished = false;
    void begin(const servesim::RecordLayout&) override {}
    void on_request(const servesim::RequestRecord& r,
                    const std::array<double, servesim::kTtftParts>*) override {
      requests.push_back(r.id);
    }
    void on_iteration(const servesim::IterationRecord& r) override {
      iterations.emplace_back(r.start_s, r.replica);
    }
    void finish() override { finished = true; }
  } seen;
  servesim::RecordOrder order({&seen});
  order.begin({});
  const auto request = [](std::int64_t id) {
    servesim::RequestRecord r;
    r.id = id;
    return r;
  };
  const auto iteration = [](double start_s, std::int32_t replica) {
    servesim::IterationRecord r;
    r.start_s = start_s;
    r.replica = replica;
    return r;
  };
  order.on_request(request(1), nullptr);
  order.on_request(request(2), nullptr);
  CHECK(seen.requests.empty());  // 0 is still in flight
  CHECK(order.waiting_requests() == 3);
  order.on_request(request(0), nullptr);
  CHECK(seen.requests == std::vector<std::int64_t>{0, 1, 2});
  CHECK(order.waiting_requests() == 0);
  CHECK_THROWS_AS(order.on_request(request(1), nullptr), servesim::InvariantError);

  order.on_iteration(iteration(1.0, 1));
  order.on_iteration(iteration(1.0, 0));  // another replica's run, reported when it ended
  order.on_iteration(iteration(2.0, 0));
  order.iterations_reported_before(1.5);
  CHECK(seen.iterations == std::vector<std::pair<double, std::int32_t>>{{1.0, 0}, {1.0, 1}});
  CHECK(order.waiting_iterations() == 1);
  // An iteration before what was passed on: the bound was wrong, a simulator bug.
  CHECK_THROWS_AS(order.on_iteration(iteration(0.9, 2)), servesim::InvariantError);
  // A replica's iterations out of time order.
  CHECK_THROWS_AS(order.on_iteration(iteration(1.9, 0)), servesim::InvariantError);
  order.finish();
  CHECK(seen.iterations.back() == std::pair<double, std::int32_t>{2.0, 0});
  CHECK(seen.finished);
}

TEST_CASE("record order refuses a request that never came", "[metrics]") {
  struct Nothing final : servesim::IRecordSink {
    void begin(const servesim::RecordLayout&) override {}
    void on_request(const servesim::RequestRecord&,
                    const std::array<double, servesim::kTtftParts>*) override {}
    void on_iteration(const servesim::IterationRecord&) override {}
    void finish() override {}
  } nothing;
  servesim::RecordOrder order({&nothing});
  order.begin({});
  servesim::RequestRecord r;
  r.id = 1;
  order.on_request(r, nullptr);
  CHECK_THROWS_AS(order.finish(), servesim::InvariantError);
}

TEST_CASE("a timeline row read from an iteration's fields equals its columns read back",
          "[metrics][study]") {
  std::mt19937_64 random(7);
  std::uniform_int_distribution<std::int64_t> tokens(0, std::int64_t{1} << 40);
  std::uniform_real_distribution<double> seconds(0.0, 1e5);
  for (int i = 0; i < 2000; ++i) {
    servesim::IterationRecord record;
    record.replica = static_cast<std::int32_t>(i % 7);
    record.start_s = i % 3 == 0 ? seconds(random) : static_cast<double>(i) * 1e-9;
    record.duration_s = seconds(random) * 1e-6;
    record.batch_size = static_cast<std::int32_t>(tokens(random) % 100000);
    record.kv_capacity_tokens = tokens(random);
    record.cached_tokens = tokens(random);
    record.prefill_tokens = tokens(random);
    record.kv_memory = {tokens(random), tokens(random), tokens(random),
                        tokens(random), tokens(random), tokens(random)};
    const servesim::TimelineRow plain = servesim::timeline_row_from_columns(record);
    const servesim::TimelineRow fast = servesim::timeline_row(record);
    INFO("record " << i);
    CHECK(fast.start_s == plain.start_s);
    CHECK(fast.duration_s == plain.duration_s);
    CHECK(fast.batch_size == plain.batch_size);
    CHECK(fast.kv_capacity_tokens == plain.kv_capacity_tokens);
    CHECK(fast.cached_tokens == plain.cached_tokens);
    CHECK(fast.prefill_tokens == plain.prefill_tokens);
    CHECK(fast.kv == plain.kv);
  }
}
