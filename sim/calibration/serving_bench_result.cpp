#include "sim/calibration/serving_bench_result.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

std::vector<BenchReplay::Lengths> replay_lengths(JsonObjectReader& r, std::int64_t num_prompts,
                                                 std::int64_t completed) {
  const nlohmann::json* inputs = r.optional_raw("input_lens");
  const nlohmann::json* outputs = r.optional_raw("output_lens");
  std::vector<BenchReplay::Lengths> lengths;
  if (inputs != nullptr && outputs != nullptr) {
    if (!inputs->is_array() || !outputs->is_array() || inputs->size() != outputs->size() ||
        inputs->empty()) {
      r.fail("input_lens", "expected input_lens and output_lens as arrays of one length each");
    }
    // One entry per request sent (vLLM writes one per prompt): fewer would make the completed
    // share, counted against num_prompts, exceed 1.
    if (inputs->size() != static_cast<std::size_t>(num_prompts)) {
      r.fail("input_lens", "expected num_prompts (" + std::to_string(num_prompts) +
                               ") entries, got " + std::to_string(inputs->size()));
    }
    for (std::size_t i = 0; i < inputs->size(); ++i) {
      const auto& in = (*inputs)[i];
      const auto& out = (*outputs)[i];
      if (!in.is_number_integer() || in.get<std::int64_t>() < 1 || !out.is_number_integer() ||
          out.get<std::int64_t>() < 0) {
        r.fail("input_lens",
               "entry " + std::to_string(i) + ": expected token counts (input >= 1, output >= 0)");
      }
      // A failed request (no output) is replayed with one token: it was sent and prefilled.
      lengths.push_back(
          {in.get<std::int64_t>(), std::max<std::int64_t>(1, out.get<std::int64_t>())});
    }
    return lengths;
  }
  // Without --save-detailed, vLLM keeps only totals: every request gets the mean lengths.
  if (completed < 1) r.fail("completed", "no completed request: the mean lengths are unknown");
  const auto mean_of = [&](std::string_view key) {
    const double total = r.positive_number(key);
    return std::max<std::int64_t>(1, std::llround(total / static_cast<double>(completed)));
  };
  const BenchReplay::Lengths mean{mean_of("total_input_tokens"), mean_of("total_output_tokens")};
  lengths.assign(static_cast<std::size_t>(num_prompts), mean);
  return lengths;
}

}  // namespace

std::vector<ServingPoint> read_bench_result(const fs::path& file,
                                            const ServingPointOptions& options,
                                            const serving_fields::Setup* setup) {
  using namespace serving_fields;
  const std::string source = file.string();
  const nlohmann::json document = read_json_file(file);
  if (!document.is_object()) throw InputError(source, "expected a JSON object");
  JsonObjectReader r(document, source);
  const std::map<std::string, std::size_t> no_columns;
  const Row defaults(no_columns, nullptr, 0, setup, source);

  ServingPoint p;
  p.source = source;
  // The deployment: model_id from the file, the rest from the setup or the command line.
  const std::string model_id = r.string("model_id");
  p.model_name = model_id;
  p.model = resolve_model(model_id, options.data_root, source + ": field \"model_id\"");
  if (options.hardware) {
    p.hardware = resolve_hardware(*options.hardware, options.data_root, "--hw");
  } else if (auto hardware = defaults.find("hardware")) {
    p.hardware = resolve_hardware(hardware->text, options.data_root, hardware->where);
  } else {
    throw InputError(source,
                     "the hardware is not recorded in a bench serve result: give --hw "
                     "NAME or a setup with \"hardware\"");
  }
  if (defaults.find("tp")) p.tp = defaults.integer("tp", 1);
  if (defaults.find("pp")) p.pp = defaults.integer("pp", 1);
  if (options.engine) {
    p.engine = *options.engine;
  } else if (auto engine = defaults.find("engine")) {
    p.engine = engine->text;
  }
  p.knobs = read_knobs(defaults);

  BenchReplay replay;
  const std::int64_t num_prompts = r.positive_integer("num_prompts");
  const nlohmann::json* rate = r.optional_raw("request_rate");
  if (rate != nullptr && rate->is_string() && rate->get<std::string>() == "inf") {
    replay.request_rate_per_s = std::numeric_limits<double>::infinity();
  } else if (rate != nullptr && rate->is_number() && rate->get<double>() > 0) {
    replay.request_rate_per_s = rate->get<double>();
  } else {
    r.fail("request_rate",
           "expected a positive number or \"inf\" (a trace or closed-loop run records no rate "
           "and cannot be replayed), got " +
               (rate != nullptr ? rate->dump() : std::string("nothing")));
  }
  if (const nlohmann::json* b = r.optional_raw("burstiness"); b != nullptr && !b->is_null()) {
    if (!b->is_number() || !(b->get<double>() > 0)) r.fail("burstiness", "expected a number > 0");
    replay.burstiness = b->get<double>();
  }
  if (const nlohmann::json* c = r.optional_raw("max_concurrency"); c != nullptr && !c->is_null()) {
    if (!c->is_number_integer() || c->get<std::int64_t>() < 1) {
      r.fail("max_concurrency", "expected an integer >= 1 or null");
    }
    replay.max_concurrency = c->get<std::int64_t>();
  }
  const auto completed = r.optional_nonnegative_integer("completed").value_or(num_prompts);
  if (completed > num_prompts) r.fail("completed", "more than num_prompts");
  replay.requests = replay_lengths(r, num_prompts, completed);

  ServingMetrics& m = p.measured;
  const auto metric = [&](std::string_view key, ServingMetric target) {
    if (const nlohmann::json* v = r.optional_raw(key); v != nullptr && !v->is_null()) {
      if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() <= 0) {
        r.fail(key, "expected a number > 0");
      }
      m[target] = v->get<double>();
    }
  };
  metric("mean_ttft_ms", ServingMetric::TtftMs);
  metric("mean_itl_ms", ServingMetric::ItlMs);
  metric("mean_e2el_ms", ServingMetric::E2eMs);
  metric("output_throughput", ServingMetric::OutputTokensPerS);
  m[ServingMetric::CompletedShare] =
      static_cast<double>(completed) / static_cast<double>(replay.requests.size());
  m.overloaded = static_cast<double>(completed) <
                 kOverloadedCompletedShare * static_cast<double>(replay.requests.size());
  p.workload = std::move(replay);
  return {std::move(p)};
}

}  // namespace servesim
