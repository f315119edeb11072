// The servesim Python module: servesim's library functions for notebooks and scripts, with
// results as dicts and pandas DataFrames built in memory. See docs/python.md.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "python/calculators.h"
#include "python/capacity.h"
#include "python/errors.h"
#include "python/run.h"
#include "python/settings.h"
#include "python/studies.h"
#include "python/usage_fallback.h"
#include "sim/core/version.h"

namespace py = pybind11;
using namespace servesim::python;

PYBIND11_MODULE(servesim, m) {
  m.doc() =
      "servesim: a discrete-event simulator of LLM serving.\n\n"
      "run() simulates one configuration, sweep() a grid of them, capacity() searches the\n"
      "highest rate or fewest replicas meeting SLOs; kv() and roofline() are the calculators.\n"
      "Each releases the GIL while it computes, so threads run simulations in parallel.\n"
      "Errors raise servesim.Error (UsageError, InputError, InfeasibleError, InternalError)\n"
      "with servesim's one-line message. See docs/python.md.";
  m.attr("__version__") = std::string(servesim::servesim_version());
  add_error_classes(m);

  py::class_<PyRunResult>(m, "RunResult", "The outputs of one servesim.run.")
      .def_readonly("summary", &PyRunResult::summary, "summary.json as a dict")
      .def_readonly("requests", &PyRunResult::requests,
                    "requests.csv as a DataFrame (None with output.request_records false)")
      .def_readonly("iterations", &PyRunResult::iterations,
                    "iterations.csv as a DataFrame (None with output.iteration_records false)")
      .def_readonly("resolved_config", &PyRunResult::resolved_config,
                    "resolved_config.json as a dict: run(result.resolved_config) repeats the run")
      .def_readonly("rejections", &PyRunResult::rejections, "rejected requests counted by reason")
      .def_readonly("kv_capacity_tokens_per_replica", &PyRunResult::kv_capacity_tokens_per_replica,
                    "the allocator's KV capacity, as iterations.csv reports it")
      .def_readonly("events", &PyRunResult::events, "events simulated")
      .def("__repr__", [](const PyRunResult& r) {
        return "<servesim.RunResult: " +
               py::str(r.summary["requests_completed"]).cast<std::string>() +
               " requests completed, " +
               py::str(r.summary["throughput_requests_per_s"]).cast<std::string>() + " req/s>";
      });

  m.def("run", &run, py::arg("config") = py::none(),
        "run(config=None, **settings) -> RunResult\n\n"
        "Simulates one serving run. `config` is a dict with the keys of resolved_config.json,\n"
        "the path of such a JSON file, or None for the built-in default (Llama-3-8B on one\n"
        "H100, sharegpt at 8 req/s, 2,000 requests). Each keyword is a `servesim run` flag\n"
        "with '_' for '-' (model, hw, tp, replicas, scheduler, rate, num_requests, seed,\n"
        "tensor_parallel_size, prompt_tokens and output_tokens, no_bulk_decode=True, ...) or a\n"
        "configuration key (hardware, 'workload.arrival.cv', ...), applied as the CLI applies\n"
        "its flags and --set. Raises InfeasibleError when every request is rejected.");
  m.def("sweep", &sweep, py::arg("config") = py::none(), py::kw_only(), py::arg("grid"),
        py::arg("jobs") = 1,
        "sweep(config=None, *, grid, jobs=1, **settings) -> DataFrame\n\n"
        "Runs every combination of `grid` ({axis: [values]}, the last axis varying fastest;\n"
        "an axis is a run flag's name such as rate or scheduler, a configuration key, or\n"
        "'policy' with SCHEDULER:ALLOCATOR[:PARAM] values), all with the same seed, on `jobs`\n"
        "threads. One row per point as sweep.csv: point, the axes, every summary metric\n"
        "('ttft_s.p99'), and does_not_fit with the reason when some point cannot be served.");
  m.def(
      "capacity",
      [](const py::object& config, const py::object& slo, std::optional<double> target_rate,
         const py::object& shapes, std::optional<double> start_rate, double precision,
         std::size_t points_per_round, std::size_t max_points, double min_rate, double max_rate,
         std::int64_t max_replicas, std::optional<double> gpu_cost_per_hour, bool disaggregated,
         const std::string& minimize, const std::string& plan_at, int jobs,
         const py::kwargs& settings) {
        CapacityOptions options;
        options.slo = slo;
        options.target_rate_per_s = target_rate;
        options.shapes = shapes;
        options.start_rate_per_s = start_rate;
        options.precision = precision;
        options.points_per_round = points_per_round;
        options.max_points = max_points;
        options.min_rate_per_s = min_rate;
        options.max_rate_per_s = max_rate;
        options.max_replicas = max_replicas;
        options.gpu_cost_per_hour = gpu_cost_per_hour;
        options.disaggregated = disaggregated;
        options.minimize = minimize;
        options.plan_at = plan_at;
        options.jobs = jobs;
        return capacity(config, options, settings);
      },
      py::arg("config") = py::none(), py::kw_only(), py::arg("slo"),
      py::arg("target_rate") = py::none(), py::arg("shapes") = py::none(),
      py::arg("start_rate") = py::none(), py::arg("precision") = 0.02,
      py::arg("points_per_round") = 3, py::arg("max_points") = 200, py::arg("min_rate") = 1e-4,
      py::arg("max_rate") = 1e6, py::arg("max_replicas") = 1024,
      py::arg("gpu_cost_per_hour") = py::none(), py::arg("disaggregated") = false,
      py::arg("minimize") = "gpus", py::arg("plan_at") = "prediction", py::arg("jobs") = 1,
      "capacity(config=None, *, slo, target_rate=None, shapes=None, ..., jobs=1, **settings)"
      " -> dict\n\n"
      "The highest arrival rate meeting `slo` ({'ttft_p99': 0.5, 'tpot_p99': 0.05}, or\n"
      "'attainment' of the run's slo_ttft/slo_tpot targets), as `servesim capacity`: a dict\n"
      "with mode 'rate', outcome (found, met_at_every_rate, unresolved, never_met),\n"
      "rate_per_s, failing_rate_per_s, gpus, the prices at that rate (usd_per_hour,\n"
      "usd_per_million_input_tokens, usd_per_million_output_tokens, usd_per_million_tokens,\n"
      "usd_per_thousand_requests; None without a price: gpu_cost_per_hour, else the\n"
      "profile's) and every point simulated as a DataFrame. A point meets the SLO only if\n"
      "its steady state is stable (steady_state.* columns). With `target_rate`, the fewest\n"
      "replicas of each of `shapes` ('h100-sxm:2' or ('h100-sxm', 2, 1)) meeting it: mode\n"
      "'replicas', a 'shapes' DataFrame (replicas, gpus, does_not_fit, the prices) and the\n"
      "points. With disaggregated=True also every prefill/decode pair of the shapes, as\n"
      "`capacity --disaggregated`: mode 'layouts', a 'deployments' DataFrame (kind,\n"
      "deployment, replicas such as '2p1d', gpus, prices, ttft_p99_s, tpot_p99_s, note), the\n"
      "'best' of each kind by `minimize` ('gpus' or 'cost'), the Pareto 'front' DataFrame\n"
      "and the points. The answers carry their error bands (ttft_band_low/high,\n"
      "tpot_band_low/high: measured / predicted - 1, docs/validation.md); plan_at='upper'\n"
      "judges the SLO at the bands' upper edge, as `capacity --plan-at upper`.");
  m.def(
      "kv",
      [](std::optional<std::string> model, std::optional<std::string> hardware,
         std::optional<std::int64_t> tokens, std::int64_t tp, std::int64_t pp,
         std::string weight_dtype, std::string kv_dtype, std::optional<double> mem_util,
         std::optional<std::int64_t> max_len, std::optional<std::int64_t> max_batched_tokens,
         std::optional<std::int64_t> max_num_seqs, std::optional<std::int64_t> layers,
         std::optional<std::int64_t> d_model, std::optional<std::int64_t> heads,
         std::optional<std::int64_t> kv_heads, std::optional<std::int64_t> kv_group,
         std::optional<std::int64_t> ffn_dim, std::optional<std::int64_t> vocab) {
        KvArguments a;
        a.model = std::move(model);
        a.hardware = std::move(hardware);
        a.tokens = tokens;
        a.tp = tp;
        a.pp = pp;
        a.weight_dtype = std::move(weight_dtype);
        a.kv_dtype = std::move(kv_dtype);
        a.mem_util = mem_util;
        a.max_len = max_len;
        a.max_batched_tokens = max_batched_tokens;
        a.max_num_seqs = max_num_seqs;
        a.layers = layers;
        a.d_model = d_model;
        a.heads = heads;
        a.kv_heads = kv_heads;
        a.kv_group = kv_group;
        a.ffn_dim = ffn_dim;
        a.vocab = vocab;
        return kv(a);
      },
      py::arg("model") = py::none(), py::arg("hardware") = py::none(), py::kw_only(),
      py::arg("tokens") = py::none(), py::arg("tp") = 1, py::arg("pp") = 1,
      py::arg("weight_dtype") = "auto", py::arg("kv_dtype") = "auto",
      py::arg("mem_util") = py::none(), py::arg("max_len") = py::none(),
      py::arg("max_batched_tokens") = py::none(), py::arg("max_num_seqs") = py::none(),
      py::arg("layers") = py::none(), py::arg("d_model") = py::none(),
      py::arg("heads") = py::none(), py::arg("kv_heads") = py::none(),
      py::arg("kv_group") = py::none(), py::arg("ffn_dim") = py::none(),
      py::arg("vocab") = py::none(),
      "kv(model=None, hardware=None, *, tokens=None, tp=1, pp=1, ...) -> dict\n\n"
      "The KV-cache calculator, as `servesim kv --json`: KV bytes per token (and for\n"
      "`tokens`), and with `hardware` the weights, activation reserve and KV capacity of one\n"
      "replica and the sequences of max_len tokens that fit. Give a model name or config.json\n"
      "path, or raw dimensions (layers, d_model, heads, kv_heads or kv_group, ffn_dim, vocab).");
  m.def(
      "roofline",
      [](std::string model, std::string hardware, std::int64_t tp, std::int64_t pp,
         std::string weight_dtype, std::string kv_dtype, std::optional<std::int64_t> decode_batch,
         std::int64_t context, std::optional<std::int64_t> prefill_tokens,
         std::int64_t prefill_context, std::optional<std::int64_t> generate,
         std::optional<std::string> engine, std::optional<std::int64_t> speculative,
         std::int64_t dp, bool expert_parallel, double expert_load_imbalance) {
        RooflineArguments a;
        a.engine = std::move(engine);
        a.speculative = speculative;
        a.dp = dp;
        a.expert_parallel = expert_parallel;
        a.expert_load_imbalance = expert_load_imbalance;
        a.model = std::move(model);
        a.hardware = std::move(hardware);
        a.tp = tp;
        a.pp = pp;
        a.weight_dtype = std::move(weight_dtype);
        a.kv_dtype = std::move(kv_dtype);
        a.decode_batch = decode_batch;
        a.context = context;
        a.prefill_tokens = prefill_tokens;
        a.prefill_context = prefill_context;
        a.generate = generate;
        return roofline(a);
      },
      py::arg("model") = "llama-3-8b", py::arg("hardware") = "h100-sxm", py::kw_only(),
      py::arg("tp") = 1, py::arg("pp") = 1, py::arg("weight_dtype") = "auto",
      py::arg("kv_dtype") = "auto", py::arg("decode_batch") = py::none(), py::arg("context") = 1024,
      py::arg("prefill_tokens") = py::none(), py::arg("prefill_context") = 0,
      py::arg("generate") = py::none(), py::arg("engine") = py::none(),
      py::arg("speculative") = py::none(), py::arg("dp") = 1, py::arg("expert_parallel") = false,
      py::arg("expert_load_imbalance") = 1.0,
      "roofline(model='llama-3-8b', hardware='h100-sxm', *, tp=1, pp=1, decode_batch=None,\n"
      "context=1024, prefill_tokens=None, prefill_context=0, generate=None, engine=None,\n"
      "speculative=None, dp=1, expert_parallel=False, expert_load_imbalance=1.0, ...) -> dict\n\n"
      "One iteration priced operator by operator, as `servesim roofline --json`: 'operators'\n"
      "is a DataFrame (name, flops, bytes, intensity, balance, bound, time_s), with the\n"
      "totals and the dominant bound; with `generate`, generating that many tokens with and\n"
      "without a KV cache.");
  m.def(
      "data_dir", [] { return data_root().string(); },
      "data_dir() -> str\n\n"
      "The folder the module reads models/, hw_profiles/, engines/ and workloads/ from:\n"
      "$SERVESIM_DATA_DIR when set, else the environment's share/servesim after `pip install .`,\n"
      "else the source tree the module was built from.");
  // Wrong arguments raise servesim.UsageError, not pybind11's TypeError.
  for (const char* name : {"run", "sweep", "capacity", "kv", "roofline"})
    add_usage_fallback(m, name);
}
