// A plain timed driver for the speed-and-scale scenarios of bench/README.md. One scenario per
// process, so that the peak resident memory it reports belongs to that scenario alone.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/app.h"
#include "sim/core/error.h"

namespace {

using servesim::ConfigOverride;
using servesim::ConfigSources;

struct Options {
  std::string scenario;
  std::string allocator = "paged";    // scenario 4: paged, max, pow2 or oracle
  std::int64_t requests = 0;          // 0: the scenario's count
  std::int64_t output_tokens = 3400;  // scenario 5: output tokens per request
  bool records = false;
  bool bulk_decode = true;
  std::string prefix_caching;  // "on" or "off"; empty: the engine's default
  double rate_fraction = 0.9;
  double rate_per_s = 0;  // > 0: skip the capacity probe
  std::filesystem::path data_root;
  std::filesystem::path out_dir;  // non-empty: write the run's outputs there (as run --out)
};

std::int64_t parse_integer(const std::string& flag, const char* text) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < 1) {
    throw servesim::UsageError(flag + ": expected a positive integer, got \"" + text + "\"");
  }
  return value;
}

double parse_number(const std::string& flag, const char* text) {
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value > 0)) {
    throw servesim::UsageError(flag + ": expected a positive number, got \"" + text + "\"");
  }
  return value;
}

Options parse(int argc, char** argv) {
  Options o;
  o.data_root = SERVESIM_BENCH_SOURCE_DIR;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw servesim::UsageError(flag + ": missing value");
      return argv[++i];
    };
    if (flag == "--scenario") {
      o.scenario = value();
    } else if (flag == "--allocator") {
      o.allocator = value();
    } else if (flag == "--requests") {
      o.requests = parse_integer(flag, value());
    } else if (flag == "--rate") {
      o.rate_per_s = parse_number(flag, value());
    } else if (flag == "--rate-fraction") {
      o.rate_fraction = parse_number(flag, value());
    } else if (flag == "--output-tokens") {
      o.output_tokens = parse_integer(flag, value());
    } else if (flag == "--records") {
      o.records = true;
    } else if (flag == "--no-bulk-decode") {
      o.bulk_decode = false;
    } else if (flag == "--prefix-caching") {
      o.prefix_caching = value();
      if (o.prefix_caching != "on" && o.prefix_caching != "off") {
        throw servesim::UsageError("--prefix-caching: expected on or off");
      }
    } else if (flag == "--data-root") {
      o.data_root = value();
    } else if (flag == "--out") {
      o.out_dir = value();
    } else {
      throw servesim::UsageError(
          "unknown flag " + flag +
          " (usage: servesim_bench --scenario 1|2|3|4|5 [--allocator paged|max|pow2|oracle] "
          "[--output-tokens N] [--requests N] [--rate R | --rate-fraction F] [--records] "
          "[--no-bulk-decode] "
          "[--prefix-caching on|off] "
          "[--data-root DIR] [--out DIR])");
    }
  }
  if (o.scenario != "1" && o.scenario != "2" && o.scenario != "3" && o.scenario != "4" &&
      o.scenario != "5") {
    throw servesim::UsageError("--scenario: expected 1, 2, 3, 4 or 5");
  }
  return o;
}

void set(ConfigSources& sources, const std::string& assignment) {
  sources.overrides.push_back(ConfigOverride{"bench", assignment});
}

struct Scenario {
  ConfigSources sources;
  std::int64_t requests = 0;
  std::int64_t replicas = 1;
  double mean_tokens_per_request = 0;  // prompt + output, for the memory estimate
  bool probe_capacity = true;          // rate = fraction x saturated throughput
  double rate_per_s = 0;               // > 0: the scenario's own rate (no probe)
  std::int64_t probe_requests_per_replica = 2000;
};

Scenario build(const Options& o) {
  Scenario s;
  ConfigSources& c = s.sources;
  if (o.scenario == "4") {
    c.config_file = o.data_root / "workloads" / "scenarios" / "vllm-paper-opt13b.json";
    s.requests = 2000;
    s.mean_tokens_per_request = 500;
    s.probe_capacity = false;  // the paper scenario's own rate
    if (o.allocator != "paged") {
      set(c, "scheduler.name=\"orca\"");
      set(c, "allocator.name=\"contiguous\"");
      set(c, "allocator.reservation=\"" + o.allocator + "\"");
    }
  } else if (o.scenario == "5") {
    // The default engine (vllm: the V1 scheduler, prefix caching, planning one step ahead),
    // as `servesim run` with no policy flags, at reasoning-length outputs: 160 prompt tokens
    // and 3,400 output tokens (--output-tokens 340 for the comparison), 400 req/s on 16
    // replicas (issue 32's figures), no probe.
    set(c, "model=\"llama-3-8b\"");
    set(c, "hardware=\"h100-sxm\"");
    set(c, "replicas=16");
    set(c, "workload=\"sharegpt\"");
    set(c,
        "workload.lengths={\"distribution\": \"independent\", \"prompt\": {\"distribution\": "
        "\"fixed\", \"tokens\": 160}, \"output\": {\"distribution\": \"fixed\", \"tokens\": " +
            std::to_string(o.output_tokens) + "}}");
    s.rate_per_s = 400;
    s.requests = 200'000;
    s.replicas = 16;
    s.mean_tokens_per_request = 160.0 + static_cast<double>(o.output_tokens);
    s.probe_capacity = false;
  } else {
    set(c, "model=\"llama-3-8b\"");
    set(c, "hardware=\"h100-sxm\"");
    set(c, "scheduler.name=\"vllm\"");
    set(c, "allocator.name=\"paged\"");
    if (o.scenario == "3") {
      set(c, "replicas=1000");
      set(c, "workload=\"azure-conv-2023\"");
      s.requests = 10'000'000;
      s.replicas = 1000;
      s.mean_tokens_per_request = 1355;
    } else {
      set(c, "replicas=16");
      set(c, "workload=\"sharegpt\"");
      s.requests = 1'000'000;
      s.replicas = 16;
      s.mean_tokens_per_request = 500;
    }
    if (o.scenario == "2") {
      // ShareGPT prompts, 10,000 output tokens each: past Llama-3-8B's 8,192 positions, so
      // Llama-3.1-8B (the same shapes, 131,072 positions) with max_len raised, and vLLM's
      // prefill limit with it.
      set(c, "model=\"llama-3.1-8b\"");
      set(c,
          "workload.lengths={\"distribution\": \"independent\", \"prompt\": "
          "{\"distribution\": \"lognormal\", \"mean\": 182, \"std\": 250, \"min\": 4, "
          "\"max\": 1024}, \"output\": {\"distribution\": \"fixed\", \"tokens\": 10000}}");
      set(c, "max_len=16384");
      set(c, "scheduler.max_num_batched_tokens=16384");
      s.mean_tokens_per_request = 10160;
      s.probe_requests_per_replica = 200;
    }
  }
  set(c, "output.request_records=" + std::string(o.records ? "true" : "false"));
  set(c, "output.iteration_records=" + std::string(o.records ? "true" : "false"));
  set(c, "engine.bulk_decode=" + std::string(o.bulk_decode ? "true" : "false"));
  if (!o.prefix_caching.empty()) {
    set(c,
        "engine.enable_prefix_caching=" + std::string(o.prefix_caching == "on" ? "true" : "false"));
  }
  if (o.requests > 0) s.requests = o.requests;
  set(c, "workload.num_requests=" + std::to_string(s.requests));
  return s;
}

// CPU seconds (user + system) this process has used: on a shared machine, the figure that
// stands for wall time on an idle core.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports KiB
}

double available_memory_bytes() {
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<double>(pages) * static_cast<double>(page_size)
                                    : 0.0;
}

// An upper estimate of what the run will hold: per-request summary values always, and the
// records when kept (a request record, and about one iteration record per 16 tokens).
double estimated_bytes(const Scenario& s, bool records) {
  const auto requests = static_cast<double>(s.requests);
  double bytes = 64e6 + requests * 48.0;
  if (records) bytes += requests * (160.0 + s.mean_tokens_per_request / 16.0 * 96.0);
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse(argc, argv);
    Scenario scenario = build(options);
    const double needed = estimated_bytes(scenario, options.records);
    const double available = available_memory_bytes();
    if (available > 0 && needed > available) {
      throw servesim::InfeasibleError(
          "scenario " + options.scenario + " with " + std::to_string(scenario.requests) +
          " requests needs about " + std::to_string(static_cast<long long>(needed / 1048576.0)) +
          " MiB but the machine has " +
          std::to_string(static_cast<long long>(available / 1048576.0)) +
          " MiB available; lower --requests or drop --records");
    }

    const auto cwd = std::filesystem::current_path();
    double rate = options.rate_per_s > 0 ? options.rate_per_s : scenario.rate_per_s;
    double probe_wall_s = 0;
    if (rate == 0 && scenario.probe_capacity) {
      // Capacity: the throughput of one replica with every request queued at time 0
      // (several batches' worth), records off, times the replicas (round robin over
      // identical replicas).
      ConfigSources probe = scenario.sources;
      set(probe, "replicas=1");
      set(probe, "workload.arrival={\"process\": \"poisson\", \"rate_per_s\": \"inf\"}");
      set(probe, "workload.num_requests=" + std::to_string(scenario.probe_requests_per_replica));
      set(probe, "output.request_records=false");
      set(probe, "output.iteration_records=false");
      const auto start = std::chrono::steady_clock::now();
      const auto outcome = servesim::run_simulation(
          servesim::assemble_config(probe, options.data_root), options.data_root, cwd);
      probe_wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      rate = options.rate_fraction * outcome.result.summary.throughput_requests_per_s *
             static_cast<double>(scenario.replicas);
    }
    if (rate > 0) set(scenario.sources, "workload.arrival.rate_per_s=" + std::to_string(rate));

    const nlohmann::json document = servesim::assemble_config(scenario.sources, options.data_root);
    const double cpu_start_s = cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    const auto outcome = servesim::run_simulation(document, options.data_root, cwd);
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu_s = cpu_seconds() - cpu_start_s;

    const auto& stats = outcome.stats;
    nlohmann::json line = {
        {"scenario", options.scenario},
        {"allocator", document["allocator"]["name"] == "paged" ? std::string("paged")
                                                               : "contiguous-" + options.allocator},
        {"requests", stats.arrived},
        {"rejected", stats.rejected},
        {"replicas", document["replicas"]},
        {"rate_per_s", rate},
        {"records", options.records},
        {"bulk_decode", options.bulk_decode},
        {"wall_s", wall_s},
        {"cpu_s", cpu_s},
        {"probe_wall_s", probe_wall_s},
        {"requests_per_wall_s", static_cast<double>(stats.arrived) / wall_s},
        {"requests_per_cpu_s", static_cast<double>(stats.arrived) / cpu_s},
        {"simulated_s", stats.end_time.seconds()},
        {"simulated_s_per_wall_s", stats.end_time.seconds() / wall_s},
        {"simulated_s_per_cpu_s", stats.end_time.seconds() / cpu_s},
        {"events", stats.events},
        {"iterations", stats.iterations},
        {"peak_rss_mib", peak_rss_bytes() / 1048576.0},
    };
    std::cout << line.dump() << '\n';
    if (!options.out_dir.empty()) {
      servesim::publish_output(options.out_dir, [&](const std::filesystem::path& staging) {
        servesim::write_run_outputs(outcome, staging);
      });
    }
    return 0;
  } catch (const servesim::Error& e) {
    std::cerr << "servesim_bench: " << e.what() << '\n';
    return servesim::exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "servesim_bench: " << e.what() << '\n';
    return 1;
  }
}
