// BackgroundRecordSink replays a run's record calls on a thread of its own: the same calls,
// in the same order, whatever the batches; a failure there surfaces on the run's thread; a run
// that throws stops the thread without finishing the files.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sim/core/error.h"
#include "sim/metrics/impl/background_record_sink.h"

namespace {

// Every call, as text, and on which thread the record calls came.
struct Log final : servesim::IRecordSink {
  std::vector<std::string> calls;
  std::vector<std::thread::id> threads;
  std::int64_t fail_at_iteration = -1;  // throws at this iteration's call
  std::int64_t iterations = 0;
  void begin(const servesim::RecordLayout& layout) override {
    calls.push_back("begin " + std::to_string(layout.ttft_parts));
  }
  void on_request(const servesim::RequestRecord& r,
                  const std::array<double, servesim::kTtftParts>* parts) override {
    calls.push_back("request " + std::to_string(r.id) + " " + r.reject_reason + " " +
                    (parts != nullptr ? std::to_string((*parts)[1]) : "-"));
    threads.push_back(std::this_thread::get_id());
  }
  void on_iteration(const servesim::IterationRecord& r) override {
    if (iterations++ == fail_at_iteration) {
      throw servesim::InputError("iterations.csv", "write failed (disk full?)");
    }
    calls.push_back("iteration " + std::to_string(r.replica) + " " + std::to_string(r.start_s) +
                    " " + std::to_string(r.kv_memory.free));
    threads.push_back(std::this_thread::get_id());
  }
  void iterations_reported_before(double start_s) override {
    calls.push_back("before " + std::to_string(start_s));
  }
  void finish() override { calls.push_back("finish"); }
};

// `count` calls of every kind, drawn from `seed`, to `sink`.
void report(servesim::IRecordSink& sink, int count, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> kind(0, 9);
  for (int i = 0; i < count; ++i) {
    const int k = kind(random);
    if (k < 2) {
      servesim::RequestRecord r;
      r.id = i;
      if (k == 1) r.reject_reason = "prompt too long " + std::to_string(i);
      const std::array<double, servesim::kTtftParts> parts{0.5, 0.25 * i};
      sink.on_request(r, i % 3 == 0 ? &parts : nullptr);
    } else if (k < 9) {
      servesim::IterationRecord r;
      r.replica = i % 5;
      r.start_s = 1e-3 * i;
      r.kv_memory.free = 1000 - i;
      sink.on_iteration(r);
    } else {
      sink.iterations_reported_before(1e-3 * i);
    }
  }
}

}  // namespace

TEST_CASE("records reported in the background reach the sink as reported directly", "[metrics]") {
  // Fewer calls than a batch, exactly some batches, and several batches and a part: more
  // than the queue holds, so the run's thread waits for the sink's.
  const int count =
      GENERATE(0, 1, 100, static_cast<int>(servesim::BackgroundRecordSink::kBatchCalls),
               static_cast<int>(3 * servesim::BackgroundRecordSink::kBatchCalls), 50'000);
  INFO(count << " calls");
  Log direct;
  direct.begin({.ttft_parts = true});
  report(direct, count, 11);
  direct.finish();

  Log replayed;
  {
    servesim::BackgroundRecordSink background(replayed);
    background.begin({.ttft_parts = true});
    report(background, count, 11);
    background.finish();
  }
  CHECK(replayed.calls == direct.calls);
  REQUIRE(replayed.calls.front() == "begin 1");
  REQUIRE(replayed.calls.back() == "finish");
  // The records were passed on by another thread than this one.
  for (const std::thread::id id : replayed.threads)
    CHECK(id != std::this_thread::get_id());
}

TEST_CASE("a sink's failure in the background is thrown on the run's thread", "[metrics]") {
  using servesim::BackgroundRecordSink;
  // Failing in the first batch, and in one after the queue has filled.
  const std::int64_t fail_at = GENERATE(std::int64_t{0}, std::int64_t{20'000});
  INFO("fails at iteration " << fail_at);
  Log log;
  log.fail_at_iteration = fail_at;
  BackgroundRecordSink background(log);
  background.begin({});
  // The failure comes back at a later hand-over or at finish(), with the sink's message;
  // the calls after it are dropped and the sink is not finished.
  try {
    report(background, 200'000, 3);
    background.finish();
    FAIL("no failure came back");
  } catch (const servesim::InputError& e) {
    CHECK(std::string(e.what()).find("iterations.csv") != std::string::npos);
    CHECK(std::string(e.what()).find("disk full") != std::string::npos);
  }
  CHECK(log.calls.back() != "finish");
  CHECK(log.iterations == fail_at + 1);
}

TEST_CASE("a run that throws stops the background sink without finishing it", "[metrics]") {
  Log log;
  {
    servesim::BackgroundRecordSink background(log);
    background.begin({});
    report(background, 30'000, 5);
    // Destroyed here without finish(), as when the run throws: it returns (no hang) and the
    // sink below is never told the files are complete.
  }
  CHECK(log.calls.front() == "begin 0");
  CHECK(log.calls.back() != "finish");
  // At most the 7 batches handed over; the one being filled never reaches it.
  CHECK(log.calls.size() <= 1 + 7 * servesim::BackgroundRecordSink::kBatchCalls);
}
