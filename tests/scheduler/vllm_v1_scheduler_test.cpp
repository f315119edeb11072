#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/policies.h"
#include "sim/app/simulation.h"
#include "sim/config/run_config.h"
#include "sim/memory/decode_round_allocator.h"
#include "sim/scheduler/impl/vllm_v1_scheduler.h"
#include "tests/support/scheduler_bench.h"
#include "tests/support/test_support.h"

using namespace servesim;

namespace {

using test::ids;
using test::paged;
using Bench = test::SchedulerBench<VllmV1Scheduler>;

VllmV1SchedulerOptions options(std::int64_t max_num_seqs, std::int64_t max_num_batched_tokens,
                               std::int64_t long_prefill_token_threshold = 0) {
  return {max_num_seqs, max_num_batched_tokens, long_prefill_token_threshold};
}

std::vector<std::int64_t> tokens_of(const BatchPlan& plan) {
  std::vector<std::int64_t> out;
  for (const auto& w : plan.work)
    out.push_back(w.tokens);
  return out;
}

// The registry's vllm_v1 with these parameters, every other one at its default.
std::unique_ptr<IBatchScheduler> from_registry(std::int64_t max_num_partial_prefills,
                                               std::int64_t max_len_tokens,
                                               std::int64_t threshold = 0) {
  const auto schedulers = scheduler_registry();
  const auto& entry = schedulers.find("vllm_v1", "test");
  PolicyParameters parameters;
  for (const auto& spec : entry.parameters)
    parameters.set(spec.name, spec.default_value);
  parameters.set("max_num_partial_prefills", max_num_partial_prefills);
  if (threshold > 0) parameters.set("long_prefill_token_threshold", threshold);
  return entry.factory.make(parameters, 0, max_len_tokens);
}

}  // namespace

TEST_CASE("vllm_v1 spends the budget on running requests first, then chunks waiting prompts",
          "[scheduler]") {
  Bench b(paged(1024), options(8, 8));
  for (int i = 0; i < 4; ++i)
    b.arrive(2, 10);
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{2, 2, 2, 2});  // 8 of 8
  Request* late = b.arrive(10, 2);
  // Four decodes take 4 tokens; the new prompt gets the 4 left, then 4, then its last 2.
  for (const std::int64_t chunk : {4, 4, 2}) {
    const BatchPlan p = b.step();
    CHECK(ids(p) == std::vector<std::int64_t>{0, 1, 2, 3, 4});
    CHECK(tokens_of(p) == std::vector<std::int64_t>{1, 1, 1, 1, chunk});
    CHECK(p.shape.decode_sequences == 4);
    CHECK(p.shape.prefill_tokens == chunk);
  }
  CHECK(late->generated_tokens == 1);
  CHECK(b.step().shape.decode_sequences == 5);
}

TEST_CASE("vllm_v1 cuts a prompt into budget-sized chunks, and partial chunks do not sample",
          "[scheduler]") {
  Bench b(paged(1024), options(4, 16));
  Request* r = b.arrive(40, 3);
  for (const std::int64_t chunk : {16, 16}) {
    const BatchPlan p = b.step();
    CHECK(tokens_of(p) == std::vector<std::int64_t>{chunk});
    CHECK(p.shape.sampled_sequences == 0);
    CHECK(r->generated_tokens == 0);
  }
  const BatchPlan p = b.step();
  CHECK(tokens_of(p) == std::vector<std::int64_t>{8});
  CHECK(p.shape.prefill_context_tokens == 40);  // the last chunk reads the 32 cached keys
  CHECK(p.shape.sampled_sequences == 1);
  CHECK(r->generated_tokens == 1);
  CHECK(b.step().shape.decode_context_tokens == 41);
}

TEST_CASE("vllm_v1 serves running requests in queue order, not decodes first", "[scheduler]") {
  // With the threshold a prompt stays partial while a later, shorter one already decodes.
  Bench b(paged(1024), options(8, 12, 8));
  Request* a = b.arrive(20, 5);
  Request* c = b.arrive(4, 5);
  BatchPlan p = b.step();
  CHECK(tokens_of(p) == std::vector<std::int64_t>{8, 4});  // a cut to 8, c whole in the rest
  p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  CHECK(p.work[0].prefill);  // a's next chunk comes first: it is older
  CHECK_FALSE(p.work[1].prefill);
  CHECK(tokens_of(p) == std::vector<std::int64_t>{8, 1});
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{4, 1});
  CHECK(a->generated_tokens == 1);
  CHECK(c->generated_tokens == 3);
}

TEST_CASE("vllm_v1's long_prefill_token_threshold lets several prompts prefill at once",
          "[scheduler]") {
  Bench b(paged(1024), options(8, 64, 8));
  for (int i = 0; i < 3; ++i)
    b.arrive(20, 2);
  for (const std::int64_t chunk : {8, 8, 4}) {
    const BatchPlan p = b.step();
    CHECK(tokens_of(p) == std::vector<std::int64_t>{chunk, chunk, chunk});
  }
  for (const auto& r : b.requests)
    CHECK(r->generated_tokens == 1);
  // Decodes are never cut: one token each.
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{1, 1, 1});
}

TEST_CASE("vllm_v1's max_num_partial_prefills only sets the default threshold, as vLLM 0.15",
          "[scheduler]") {
  const auto first_chunks = [](IBatchScheduler& scheduler) {
    const auto allocator = paged(100000);
    std::vector<std::unique_ptr<Request>> requests;
    for (std::int64_t id = 0; id < 3; ++id) {
      requests.push_back(std::make_unique<Request>());
      requests.back()->spec = RequestSpec{id, {}, 1000, 10};
      scheduler.enqueue(requests.back().get());
    }
    BatchPlan plan;
    scheduler.plan(*allocator, plan);
    return tokens_of(plan);
  };
  // 1 (the default): no threshold, so the first prompt takes 1,000 of the 8,192 tokens.
  CHECK(first_chunks(*from_registry(1, 4096)) == std::vector<std::int64_t>{1000, 1000, 1000});
  // Above 1: int(4% of max_len) = 163 tokens per request and step, and no cap on how many
  // prompts are partial at once (vLLM's V1 scheduler has none).
  CHECK(first_chunks(*from_registry(2, 4096)) == std::vector<std::int64_t>{163, 163, 163});
  // A threshold given is kept, and may not exceed max_len then (vLLM's check).
  CHECK(first_chunks(*from_registry(2, 4096, 100)) == std::vector<std::int64_t>{100, 100, 100});
  CHECK_THROWS_WITH(from_registry(2, 4096, 5000),
                    Catch::Contains("scheduler.long_prefill_token_threshold"));
  CHECK_NOTHROW(from_registry(1, 4096, 5000));
}

TEST_CASE("vllm_v1 admits up to max_num_seqs and skips requests in flight", "[scheduler]") {
  Bench seats(paged(1024), options(2, 64));
  for (int i = 0; i < 3; ++i)
    seats.arrive(4, 5);
  CHECK(ids(seats.step()) == std::vector<std::int64_t>{0, 1});  // the third finds no seat

  Bench pipeline(paged(1024), options(8, 8));
  pipeline.arrive(20, 3);
  pipeline.arrive(4, 3);
  const BatchPlan first = pipeline.launch();  // 8 of the 20, still in the pipeline
  const BatchPlan second = pipeline.launch();
  CHECK(ids(second) == std::vector<std::int64_t>{1});
  CHECK(tokens_of(second) == std::vector<std::int64_t>{4});
  pipeline.complete(first);
  pipeline.complete(second);
  // Queue order: the older prompt's next chunk spends the whole budget, and the decode
  // behind it waits a step.
  CHECK(ids(pipeline.step()) == std::vector<std::int64_t>{0});
  CHECK(ids(pipeline.step()) == std::vector<std::int64_t>{0, 1});
}

TEST_CASE("vllm_v1 preempts the newest running request and admits nobody in that step",
          "[scheduler]") {
  Bench b(paged(64), options(8, 32));  // 4 blocks of 16
  Request* a = b.arrive(16, 40);
  Request* c = b.arrive(16, 40);
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{16, 16});
  Request* d = b.arrive(4, 4);
  // a and c decode, two blocks each, until a needs a third block with the cache full.
  BatchPlan p;
  int iterations = 0;
  do {
    p = b.step();
    if (p.preempted.empty()) CHECK(ids(p) == std::vector<std::int64_t>{0, 1});
  } while (p.preempted.empty() && ++iterations < 100);
  CHECK(p.preempted == std::vector<Request*>{c});
  CHECK(ids(p) == std::vector<std::int64_t>{0});
  CHECK(c->state == RequestState::Preempted);
  CHECK(c->generated_tokens == 17);
  // The victim's two blocks are free and d would fit, but a preempting step admits nobody.
  CHECK(b.allocator->can_admit(4, 8));
  CHECK(d->state == RequestState::Waiting);
  // Next step c (33 tokens to recompute) heads the queue; its first chunk, 31 tokens, needs
  // two blocks and one is free, so neither it nor d behind it is admitted. The scheduler
  // knew that as it planned the preempting step: the plans after it repeat it (a decode run
  // may start there).
  CHECK(b.scheduler.judges_preempting_plans());
  CHECK(b.scheduler.last_plan_repeats());
  CHECK(ids(b.step()) == std::vector<std::int64_t>{0});
  CHECK(b.scheduler.last_plan_repeats());
  while (!a->finished() && ++iterations < 100)
    CHECK(ids(b.step()) == std::vector<std::int64_t>{0});
  // a gone: c re-prefills 32 of its 33 tokens, the whole budget; then its last token, and d
  // is admitted into the rest.
  p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{1});
  CHECK(tokens_of(p) == std::vector<std::int64_t>{32});
  CHECK(b.scheduler.last_plan_repeats());  // it preempted nobody
  p = b.step();
  CHECK(ids(p) == std::vector<std::int64_t>{1, 2});
  CHECK(tokens_of(p) == std::vector<std::int64_t>{1, 4});
  CHECK(c->generated_tokens == 18);
  CHECK(d->generated_tokens == 1);
  while (!b.idle() && ++iterations < 200)
    b.step();
  for (const auto& r : b.requests)
    CHECK(r->finished());
}

TEST_CASE("vllm_v1 preempts a request that is itself the newest", "[scheduler]") {
  // Two blocks of 16. c's tokens reach a second block before a's do: a, planned first, is
  // no victim, so c preempts itself and a decodes on alone.
  Bench b(paged(32), options(4, 16));
  Request* a = b.arrive(4, 20);
  Request* c = b.arrive(8, 20);
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{4, 8});
  BatchPlan p;
  int iterations = 0;
  do {
    p = b.step();
  } while (p.preempted.empty() && ++iterations < 100);
  CHECK(p.preempted == std::vector<Request*>{c});
  CHECK(ids(p) == std::vector<std::int64_t>{0});
  CHECK(c->computed_tokens == 0);
  CHECK(a->state == RequestState::Running);
  CHECK(a->tokens() == 14);
  while (!b.idle() && ++iterations < 500)
    b.step();
  for (const auto& r : b.requests)
    CHECK(r->finished());
}

TEST_CASE("vllm_v1 judges a round that preempts as its plan then turns out", "[scheduler]") {
  // Before each step whose decodes will run out of blocks, the allocator's cohort says whom
  // the round preempts and what it leaves free, and repeats_after_preempting says whether the
  // plans after it repeat; the step itself must preempt those and leave last_plan_repeats so.
  int judged = 0;
  int repeats = 0;
  // A small budget (re-admissions in small chunks), a large one, and a watermark.
  for (const auto& [budget, watermark] :
       {std::pair{std::int64_t{96}, 0.0}, std::pair{std::int64_t{2048}, 0.0},
        std::pair{std::int64_t{2048}, 0.05}}) {
    Bench b(std::make_unique<PagedAllocator>(1600, 16, watermark), options(24, budget));
    std::mt19937_64 random(static_cast<std::uint64_t>(budget));
    const int judged_before = judged;
    for (int step = 0; step < 4000 && judged - judged_before < 200; ++step) {
      if (step % 5 == 0) {
        b.arrive(static_cast<std::int64_t>(random() % 120) + 1,
                 static_cast<std::int64_t>(random() % 400) + 1);
      }
      const std::vector<Request*>& running = b.queues().running();
      std::vector<std::int64_t> sequences;
      for (const Request* r : running)
        sequences.push_back(r->spec.id);
      const bool all_decode =
          !running.empty() && std::none_of(running.begin(), running.end(),
                                           [](const Request* r) { return r->prefilling(); });
      std::vector<DecodeRoundStretch> stretches;
      std::optional<bool> verdict;
      std::vector<Request*> victims;
      if (all_decode) {
        b.allocator->decode_rounds()->decode_stretches(
            sequences, 1,
            [&](const DecodeRoundStretch& next) {
              for (std::size_t i = running.size(); i-- > next.sequences;)
                victims.push_back(running[i]);
              verdict = b.scheduler.repeats_after_preempting(
                  victims, 0, static_cast<std::int64_t>(next.sequences), next.admissible_tokens);
              return *verdict;
            },
            stretches);
      }
      const BatchPlan plan = b.step();
      if (!verdict) continue;
      ++judged;
      repeats += *verdict ? 1 : 0;
      CHECK(plan.preempted == victims);
      CHECK(plan.work.size() == stretches.back().sequences);
      CHECK(b.scheduler.last_plan_repeats() == *verdict);
    }
    CHECK(judged - judged_before >= 50);
  }
  INFO(repeats << " of " << judged << " repeat");
  CHECK(repeats > 0);
  CHECK(repeats < judged);
}

TEST_CASE("vllm_v1 says decode plans follow a plan that ends prompts as the next plan turns out",
          "[scheduler]") {
  // After each plan that ends prompts after its decodes, last_plan_then_decodes says whether
  // the next plan, the queues unchanged, decodes every running request and nothing else.
  // A small budget, a large one, and a tight memory.
  int promised = 0;
  for (const auto& [budget, capacity] : {std::pair{std::int64_t{96}, std::int64_t{6400}},
                                         std::pair{std::int64_t{2048}, std::int64_t{6400}},
                                         std::pair{std::int64_t{2048}, std::int64_t{1600}}}) {
    Bench b(paged(capacity), options(24, budget));
    std::mt19937_64 random(static_cast<std::uint64_t>(budget + capacity));
    for (int step = 0; step < 3000; ++step) {
      // Arrivals between the plans judged and the plans after them would void the promise.
      const BatchPlan plan = b.step();
      // Its decodes first, then prompt chunks, each ending its prompt; nobody finished.
      const auto decodes = static_cast<std::ptrdiff_t>(plan.decode_sequences.size());
      const bool ends_prompts_last =
          plan.shape.prefill_sequences > 0 &&
          std::all_of(plan.work.begin() + decodes, plan.work.end(),
                      [](const ScheduledWork& w) { return w.prefill; }) &&
          std::all_of(plan.work.begin(), plan.work.end(), [](const ScheduledWork& w) {
            return !w.request->prefilling() && !w.request->finished();
          });
      const bool then_decodes = b.scheduler.last_plan_then_decodes();
      // A plan that preempted did something else: the hook does not speak for it.
      if (!plan.preempted.empty()) CHECK_FALSE(then_decodes);
      if (ends_prompts_last && plan.preempted.empty() && !b.queues().running().empty()) {
        std::vector<std::int64_t> running;
        for (const Request* r : b.queues().running())
          running.push_back(r->spec.id);
        const BatchPlan next = b.launch();
        if (then_decodes && next.preempted.empty()) {
          ++promised;
          CHECK(next.shape.prefill_sequences == 0);
          CHECK(ids(next) == running);
        }
        b.complete(next);
      }
      if (step % 4 == 0 && step < 2400) {
        b.arrive(static_cast<std::int64_t>(random() % 150) + 1,
                 static_cast<std::int64_t>(random() % 300) + 2);
      }
    }
  }
  CHECK(promised >= 100);

  // The chunk that ends a prompt takes the budget the next head needed: the next plan, its
  // decodes taking less, admits that head, so no decode plans follow.
  Bench b(paged(1024), options(8, 16));
  b.arrive(4, 50);
  b.step();
  b.arrive(15, 50);
  Request* head = b.arrive(4, 50);
  const BatchPlan ends = b.step();
  CHECK(tokens_of(ends) == std::vector<std::int64_t>{1, 15});
  CHECK_FALSE(b.scheduler.last_plan_then_decodes());
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{1, 1, 4});
  CHECK(head->generated_tokens == 1);
  // With nobody waiting, they do.
  b.arrive(13, 50);
  CHECK(tokens_of(b.step()) == std::vector<std::int64_t>{1, 1, 1, 13});
  CHECK(b.scheduler.last_plan_then_decodes());
}

TEST_CASE("vllm_v1 plans the same with and without batch_decodes", "[scheduler]") {
  // A mix of lengths on a cache far too small, arriving over time: preemption by the dozen.
  const auto run = [](bool batch_decodes) {
    VllmV1SchedulerOptions o = options(16, 64);
    o.batch_decodes = batch_decodes;
    Bench b(paged(1024), o);
    std::vector<std::vector<std::int64_t>> plans;
    std::int64_t preempted = 0;
    for (int step = 0; step < 3000 && (step < 200 || !b.idle()); ++step) {
      if (step < 200 && step % 3 == 0) b.arrive(1 + (step * 37) % 200, 1 + (step * 53) % 300);
      const BatchPlan p = b.step();
      std::vector<std::int64_t> record = ids(p);
      for (const auto& w : p.work)
        record.push_back(w.tokens);
      for (const Request* r : p.preempted)
        record.push_back(-1 - r->spec.id);
      preempted += static_cast<std::int64_t>(p.preempted.size());
      plans.push_back(record);
    }
    CHECK(b.idle());
    CHECK(preempted > 10);
    return plans;
  };
  CHECK(run(true) == run(false));
}

TEST_CASE("vllm_v1 rejects only what can never fit, and bad options", "[scheduler]") {
  const VllmV1Scheduler scheduler(options(8, 64));
  const PagedAllocator allocator(640, 16);
  CHECK_FALSE(scheduler.reject_reason(RequestSpec{0, {}, 600, 40}, allocator));  // chunked
  CHECK_THAT(scheduler.reject_reason(RequestSpec{1, {}, 600, 100}, allocator).value(),
             Catch::Contains("KV capacity"));
  CHECK_THROWS_WITH(VllmV1Scheduler(options(0, 64)), Catch::Contains("scheduler.max_num_seqs"));
  CHECK_THROWS_WITH(
      VllmV1Scheduler(options(128, 64)),
      Catch::Contains("scheduler.max_num_batched_tokens") && Catch::Contains("max_num_seqs (128)"));
  CHECK_THROWS_WITH(VllmV1Scheduler(options(8, 64, -1)),
                    Catch::Contains("scheduler.long_prefill_token_threshold"));
}

TEST_CASE("vllm_v1 on a cluster under memory pressure: every request finishes or is rejected",
          "[scheduler][cluster]") {
  nlohmann::json config = run_config_to_json(RunConfig{});
  config["scheduler"] = {
      {"name", "vllm_v1"}, {"max_num_seqs", 64}, {"max_num_batched_tokens", 512}};
  config["memory"]["kv_capacity_tokens"] = 3000;
  config["max_len"] = 4096;
  config["replicas"] = 2;
  config["output"] = {{"request_records", false}, {"iteration_records", false}};
  config["workload"] = {{"arrival", {{"process", "poisson"}, {"rate_per_s", 40}}},
                        {"lengths",
                         {{"distribution", "independent"},
                          {"prompt", {{"distribution", "uniform"}, {"min", 16}, {"max", 2500}}},
                          {"output", {{"distribution", "uniform"}, {"min", 1}, {"max", 800}}}}},
                        {"num_requests", 400}};
  const auto outcome = run_simulation(config, test::source_dir(), std::filesystem::current_path());
  const auto& stats = outcome.stats;
  const auto& summary = outcome.result.summary;
  INFO("preemptions " << summary.preemptions);
  CHECK(stats.arrived == 400);
  CHECK(stats.finished + stats.rejected == stats.arrived);
  CHECK(stats.rejected > 0);  // prompt + output over 3,000 tokens
  CHECK(stats.finished > stats.arrived / 2);
  CHECK(summary.preemptions > 0);
}
