// Malformed input fed to the real servesim executable, one subprocess per case under a time
// limit: each must exit with the documented code of its error class, print exactly one line
// "servesim: error: ..." naming the source and the position, and leave no output behind.
// Malformed flags are in bad_flag_input_test.cpp.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/bad_input/bad_input_support.h"
#include "tests/bad_input/subprocess.h"
#include "tests/support/test_support.h"

namespace {

using namespace servesim::test::bad_input;
using servesim::test::run_executable;

// A workload spec replaying `trace`, relative to the spec's folder.
const std::string kTraceSpec =
    R"({"arrival": {"process": "trace"}, "lengths": {"distribution": "trace"},
        "trace": {"path": "t.csv"}})";
const std::string kPlainHeader = "arrival_time_s,prompt_tokens,output_tokens\n";
const std::string kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
const std::string kWorkload =
    R"({"arrival": {"process": "poisson", "rate_per_s": 2},
        "lengths": {"distribution": "independent",
                    "prompt": {"distribution": "fixed", "tokens": 16},
                    "output": {"distribution": "fixed", "tokens": 16}},
        "num_requests": 4})";

// The header of a journal of `sweep --grid rate=1 --num-requests 4`.
const std::string kJournalHeader =
    R"({"servesim_journal":2,"study":{"arguments":["--grid","rate=1","--num-requests","4"],)"
    R"("command":"sweep"}})"
    "\n";

std::vector<BadInputCase> cases() {
  const std::vector<std::string> trace_run = run_with({"--workload", "w.json"});
  const auto trace_case = [&](std::string name, std::string csv, std::vector<std::string> expect) {
    return BadInputCase{std::move(name),
                        {{"w.json", kTraceSpec}, {"t.csv", std::move(csv)}},
                        trace_run,
                        kInput,
                        std::move(expect)};
  };
  const auto config_case = [](std::string name, std::string json, std::vector<std::string> expect) {
    return BadInputCase{std::move(name),
                        {{"c.json", std::move(json)}},
                        run_with({"--config", "c.json", "--num-requests", "4"}),
                        kInput,
                        std::move(expect)};
  };
  const auto model_case = [](std::string name, std::string json, std::vector<std::string> expect) {
    return BadInputCase{std::move(name),
                        {{"m.json", std::move(json)}},
                        run_with({"--model", "./m.json", "--num-requests", "4"}),
                        kInput,
                        std::move(expect)};
  };
  const auto hw_case = [](std::string name, std::string json, std::vector<std::string> expect) {
    return BadInputCase{std::move(name),
                        {{"hw.json", std::move(json)}},
                        run_with({"--hw", "./hw.json", "--num-requests", "4"}),
                        kInput,
                        std::move(expect)};
  };
  // A sweep resumed from a journal beside its folder holding `line` after its header.
  const auto journal_case = [](std::string name, std::string line,
                               std::vector<std::string> expect) {
    return BadInputCase{std::move(name),
                        {{".out.journal", "", Kind::Directory},
                         {".out.journal/journal.jsonl", kJournalHeader + line + "\n"}},
                        {"sweep", "--grid", "rate=1", "--num-requests", "4", "--resume", "out"},
                        kInput,
                        std::move(expect)};
  };
  const auto workload_case = [](std::string name, std::string json,
                                std::vector<std::string> expect) {
    return BadInputCase{std::move(name),
                        {{"w.json", std::move(json)}},
                        run_with({"--workload", "w.json"}),
                        kInput,
                        std::move(expect)};
  };

  return {
      // Run configurations (--config).
      config_case("config: truncated JSON", R"({"tp": 1, "scheduler": {"name": "vllm")",
                  {"c.json", "malformed JSON at line 1"}),
      config_case("config: wrong type", R"({"tp": "two"})", {"field \"tp\"", "expected"}),
      config_case("config: NaN literal", "{\n  \"memory\": {\"mem_util\": NaN}\n}",
                  {"c.json", "line 2, column 26"}),
      config_case("config: Infinity literal", R"({"slo": {"ttft_s": Infinity}})",
                  {"c.json", "line 1, column 20"}),
      config_case("config: number overflows a double", "{\n\n  \"seed\": 1e999}",
                  {"c.json", "line 3, column 11", "1e999"}),
      config_case("config: integer beyond 64 bits", R"({"replicas": 99999999999999999999})",
                  {"field \"replicas\"", "too large"}),
      config_case("config: negative count", R"({"replicas": -1})",
                  {"field \"replicas\"", "positive integer"}),
      config_case("config: zero size", R"({"scheduler": {"max_num_seqs": 0}})",
                  {"field \"scheduler.max_num_seqs\"", "positive"}),
      config_case("config: fraction out of range", R"({"memory": {"mem_util": 1.5}})",
                  {"field \"memory.mem_util\"", "(0, 1]"}),
      config_case("config: unknown memory accounting", R"({"memory": {"accounting": "guess"}})",
                  {"field \"memory.accounting\"", "\"reserve\" or \"profile_run\""}),
      config_case("config: negative sampler bytes",
                  R"({"memory": {"sampler_bytes_per_logit": -1}})",
                  {"field \"memory.sampler_bytes_per_logit\"", "at least 0"}),
      config_case("config: unknown key", R"({"schedular": {"name": "vllm"}})",
                  {"field \"schedular\"", "unknown key"}),
      config_case("config: duplicate key", "{\"tp\": 1,\n \"tp\": 2}",
                  {"c.json", "\"tp\" appears twice", "line 2, column 2"}),
      config_case("config: non-UTF-8 bytes", "{\"model\": \"llama\xff\xfe\"}",
                  {"c.json", "malformed JSON at line 1", "UTF-8"}),
      config_case("config: CRLF line endings, error on line 3", "{\r\n\"tp\": 1,\r\n\"pp\": ,\r\n}",
                  {"c.json", "line 3, column 7"}),
      config_case("config: empty file", "", {"c.json", "empty"}),
      // Nested 100,000 deep: refused at the bracket one level past the limit (129 levels: the
      // object, then 128 arrays from column 9), instead of overflowing the stack.
      config_case("config: nested 100,000 deep", "{\"seed\": " + nested(100000) + "}",
                  {"c.json", "JSON nested deeper than 128 levels at line 1, column 137"}),
      config_case("config: top level is an array", "[1, 2]", {"expected a JSON object"}),
      config_case("config: unknown scheduler", R"({"scheduler": {"name": "fifo"}})",
                  {"scheduler.name", "fifo", "vllm"}),
      {"config: workload of the wrong type",
       {{"c.json", R"({"workload": 5})"}},
       run_with({"--config", "c.json"}),
       kInput,
       {"field \"workload\"", "expected a workload object"}},
      {"config: a directory",
       {{"c.json", "", Kind::Directory}},
       run_with({"--config", "c.json"}),
       kInput,
       {"c.json", "not a regular file"}},
      {"config: a FIFO (would block a reader)",
       {{"c.json", "", Kind::Fifo}},
       run_with({"--config", "c.json"}),
       kInput,
       {"c.json", "not a regular file"}},
      {"config: missing file",
       {},
       run_with({"--config", "absent.json"}),
       kInput,
       {"absent.json", "not found"}},
      {"config: unreadable file",
       {{"c.json", "{}", Kind::Unreadable}},
       run_with({"--config", "c.json"}),
       kInput,
       {"c.json", "cannot open"}},

      // Policy parameters: a key the chosen policy does not read, named with the policy and
      // the keys it does read.
      {"policy key: a reservation for the paged allocator",
       {},
       run_with({"--reservation", "pow2", "--allocator", "paged", "--num-requests", "4"}),
       kInput,
       {"field \"allocator.reservation\"", "allocator \"paged\"",
        "reads name, block_size, watermark", "read by allocator \"contiguous\""}},
      {"policy key: a block size for the contiguous allocator",
       {},
       run_with({"--block-size", "32", "--allocator", "contiguous", "--scheduler", "orca",
                 "--num-requests", "4"}),
       kInput,
       {"field \"allocator.block_size\"", "allocator \"contiguous\"",
        "reads name, reservation, placement", "read by allocator \"paged\""}},
      {"policy key: batch_size for the vllm scheduler",
       {},
       run_with({"--scheduler", "vllm", "--set", "scheduler.batch_size=4", "--num-requests", "4"}),
       kInput,
       {"field \"scheduler.batch_size\"", "scheduler \"vllm\"",
        "reads name, max_num_seqs, max_num_batched_tokens, preemption",
        "read by scheduler \"static\""}},
      {"policy key: fixed_reservation_tokens with the pow2 reservation",
       {},
       run_with({"--scheduler", "orca", "--allocator", "contiguous", "--reservation", "pow2",
                 "--set", "allocator.fixed_reservation_tokens=512", "--num-requests", "4"}),
       kInput,
       {"field \"allocator.fixed_reservation_tokens\"",
        "allocator \"contiguous\" (reservation \"pow2\", placement \"buddy\")",
        "reads name, reservation, placement", "read by reservation \"fixed\""}},
      {"policy key: swap preemption for the orca scheduler",
       {},
       run_with({"--scheduler", "orca", "--preemption", "swap", "--num-requests", "4"}),
       kInput,
       {"field \"scheduler.preemption\"", "scheduler \"orca\"",
        "reads name, max_num_seqs, max_num_batched_tokens", "read by scheduler \"vllm\""}},
      {"policy key: misspelt parameter",
       {},
       run_with({"--scheduler", "vllm", "--set", "scheduler.max_num_seq=4", "--num-requests", "4"}),
       kInput,
       {"field \"scheduler.max_num_seq\"", "unknown key", "scheduler \"vllm\" reads name"}},
      config_case("policy key: in a config file",
                  R"({"allocator": {"name": "paged", "block_size": 16, "placement": "buddy"}})",
                  {"field \"allocator.placement\"", "allocator \"paged\"",
                   "reads name, block_size, watermark"}),
      {"policy key: a flag's key survives switching away from the file's policy",
       {{"c.json", R"({"allocator": {"name": "contiguous", "placement": "first_fit"},
                       "scheduler": {"name": "orca"}})"}},
       run_with({"--config", "c.json", "--allocator", "paged", "--placement", "buddy",
                 "--num-requests", "4"}),
       kInput,
       {"field \"allocator.placement\"", "allocator \"paged\""}},
      {"policy key: unknown cost model",
       {},
       run_with({"--cost-model", "analytic", "--num-requests", "4"}),
       kInput,
       {"cost_model.name", "unknown cost model \"analytic\"", "valid: roofline"}},
      {"policy key: a sweep point whose policy does not read a --set key",
       {},
       {"sweep", "--grid", "allocator=contiguous,paged", "--scheduler", "orca", "--set",
        "allocator.reservation=max", "--num-requests", "4", "--out", "out"},
       kInput,
       {"grid point 1 (allocator=paged)", "field \"allocator.reservation\"",
        "allocator \"paged\""}},
      {"policy key: a compared combination whose policy does not read a flag's key",
       {},
       {"compare", "--policies", "orca:contiguous,vllm:paged", "--reservation", "pow2",
        "--num-requests", "4", "--out", "out"},
       kInput,
       {"field \"allocator.reservation\"", "allocator \"paged\""}},

      // Hugging Face model files (--model PATH).
      model_case("model: truncated", llama().substr(0, 100), {"m.json", "malformed JSON at line"}),
      model_case("model: nested 100,000 deep",
                 patched(llama(), R"("hidden_size": 4096)", R"("hidden_size": )" + nested(100000)),
                 {"m.json", "JSON nested deeper than 128 levels at line"}),
      model_case("model: a Gemma text_config that is no object",
                 patched(shipped("models/gemma-3-27b.json"), R"("text_config": {)",
                         R"("text_config": "gemma3_text", "x": {)"),
                 {"m.json", "field \"text_config\": expected a JSON object", "string"}),
      model_case("model: unsupported architecture",
                 patched(llama(), R"("model_type": "llama")", R"("model_type": "gpt2")"),
                 {"m.json", "field \"model_type\"", "gpt2"}),
      model_case("model: negative layers",
                 patched(llama(), R"("num_hidden_layers": 32)", R"("num_hidden_layers": -32)"),
                 {"m.json", "field \"num_hidden_layers\""}),
      model_case("model: zero vocabulary",
                 patched(llama(), R"("vocab_size": 128256)", R"("vocab_size": 0)"),
                 {"m.json", "field \"vocab_size\""}),
      model_case("model: dimensions that overflow byte counts",
                 patched(llama(), R"("hidden_size": 4096)", R"("hidden_size": 4096000000000)"),
                 {"m.json", "out of range"}),
      model_case("model: size as a string",
                 patched(llama(), R"("hidden_size": 4096)", R"("hidden_size": "4096")"),
                 {"m.json", "field \"hidden_size\"", "expected a number"}),
      model_case("model: KV heads do not divide heads",
                 patched(llama(), R"("num_key_value_heads": 8)", R"("num_key_value_heads": 5)"),
                 {"m.json", "num_key_value_heads"}),
      model_case("model: NaN",
                 patched(llama(), R"("rms_norm_eps": 1e-05)", R"("rms_norm_eps": NaN)"),
                 {"m.json", "line 14, column 19"}),
      {"model: a directory",
       {{"hf_model", "", Kind::Directory}},
       run_with({"--model", "./hf_model"}),
       kInput,
       {"hf_model", "a model folder must hold config.json"}},
      {"model: unknown short name",
       {},
       run_with({"--model", "llama-9"}),
       kInput,
       {"model", "llama-9", "llama-3-8b"}},

      // Hardware profiles (--hw PATH).
      {"engine: unknown name",
       {},
       run_with({"--engine", "vllm-0.99", "--num-requests", "4"}),
       kInput,
       {"unknown engine \"vllm-0.99\"", "sglang", "trtllm", "vllm-v0"}},
      {"engine: unknown key",
       {{"e.json", patched(vllm_engine(), "\"step_s\"", "\"stepp_s\"")}},
       run_with({"--engine", "./e.json", "--num-requests", "4"}),
       kInput,
       {"e.json", "field \"host.stepp_s\": unknown key"}},
      {"engine: negative cost",
       {{"e.json", patched(vllm_engine(), "\"per_sequence_s\": 5e-06", "\"per_sequence_s\": -1")}},
       run_with({"--engine", "./e.json", "--num-requests", "4"}),
       kInput,
       {"e.json", "field \"host.per_sequence_s\": expected a time in [0, 3600] s"}},
      {"engine: a host cost past an hour",
       {{"e.json",
         patched(vllm_engine(), "\"per_sequence_s\": 5e-06", "\"per_sequence_s\": 1e300")}},
       run_with({"--engine", "./e.json", "--num-requests", "4"}),
       kInput,
       {"e.json", "field \"host.per_sequence_s\": expected a time in [0, 3600] s"}},
      {"engine: a number without its source",
       {{"e.json", patched(vllm_engine(), "\"scheduling.block_size\":", "\"x\":")}},
       run_with({"--engine", "./e.json", "--num-requests", "4"}),
       kInput,
       {"e.json", "has no source for scheduling.block_size"}},
      {"engine: a scheduler default the scheduler does not read",
       {{"e.json", patched(vllm_engine(), "\"max_num_seqs\": 256", "\"batch_size\": 256")}},
       run_with({"--engine", "./e.json", "--hw", "l40s", "--num-requests", "4"}),
       kInput,
       {"e.json", "scheduler \"vllm_v1\" has no parameter \"batch_size\""}},
      {"engine: chunked_prefill that its scheduler contradicts",
       {{"e.json",
         patched(vllm_engine(), "\"chunked_prefill\": true", "\"chunked_prefill\": false")}},
       run_with({"--engine", "./e.json", "--num-requests", "4"}),
       kInput,
       {"e.json", "scheduling.chunked_prefill", "scheduler \"vllm_v1\" chunks prompts"}},
      {"engine: an unknown cost key in the run config",
       {},
       run_with({"--set", "engine.host.launch_s=1", "--num-requests", "4"}),
       kInput,
       {"field \"engine.host.launch_s\": unknown key"}},
      {"hardware: a host cost left in a hardware profile",
       {{"hw.json",
         patched(h200(), "\"kernel_launch_s\"", "\"iteration_s\": 0.001, \"kernel_launch_s\"")}},
       run_with({"--hw", "./hw.json", "--num-requests", "4"}),
       kInput,
       {"hw.json", "overheads.iteration_s", "moved to engine profiles"}},
      hw_case("hardware: truncated", h200().substr(0, 80), {"hw.json", "malformed JSON at line"}),
      hw_case("hardware: zero bandwidth",
              patched(h200(), R"("memory_bandwidth_bytes_per_s": 4.8e12)",
                      R"("memory_bandwidth_bytes_per_s": 0)"),
              {"hw.json", "field \"memory_bandwidth_bytes_per_s\""}),
      hw_case("hardware: nested 100,000 deep",
              patched(h200(), R"("name": "H200",)", R"("name": )" + nested(100000) + ","),
              {"hw.json", "JSON nested deeper than 128 levels at line"}),
      hw_case("hardware: a link so slow transfers overflow integer nanoseconds",
              patched(h200(), R"("gpu_link_bandwidth_bytes_per_s": )",
                      R"("gpu_link_bandwidth_bytes_per_s": 1e-12, "x": )"),
              {"hw.json", "field \"gpu_link_bandwidth_bytes_per_s\"", "at least 1e+06 B/s"}),
      hw_case("hardware: a peak so low iterations overflow integer nanoseconds",
              patched(h200(), R"("bf16": )", R"("bf16": 1e-3, "x": )"),
              {"hw.json", "field \"peak_flops_per_s.bf16\"", "at least 1e+09 FLOP/s"}),
      hw_case("hardware: a kernel launch cost past an hour",
              patched(h200(), R"("kernel_launch_s": )", R"("kernel_launch_s": 1e300, "x": )"),
              {"hw.json", "field \"overheads.kernel_launch_s\"", "[0, 3600] s"}),
      hw_case("hardware: negative memory",
              patched(h200(), R"("memory_capacity_bytes": 150754820096)",
                      R"("memory_capacity_bytes": -1)"),
              {"hw.json", "field \"memory_capacity_bytes\""}),
      hw_case("hardware: unknown key",
              patched(h200(), R"("name": "H200",)", R"("name": "H200", "memory_gb": 141,)"),
              {"hw.json", "field \"memory_gb\"", "unknown key"}),
      hw_case("hardware: efficiency above 1",
              patched(h200(), R"("gemm_compute": )", R"("gemm_compute": 7)"),
              {"hw.json", "field \"efficiency.gemm_compute\""}),

      // Workload presets (--workload PATH).
      workload_case("workload: truncated", kWorkload.substr(0, 60), {"w.json", "malformed JSON"}),
      workload_case("workload: nested 100,000 deep",
                    patched(kWorkload, R"("num_requests": 4)", R"("x": )" + nested(100000)),
                    {"w.json", "JSON nested deeper than 128 levels at line 5, column"}),
      workload_case("workload: unknown arrival process",
                    patched(kWorkload, "\"poisson\"", "\"bursty\""),
                    {"field \"arrival.process\"", "bursty", "gamma"}),
      workload_case("workload: key of another process",
                    patched(kWorkload, R"("rate_per_s": 2)", R"("rate_per_s": 2, "cv": 4)"),
                    {"field \"arrival.cv\"", "not used with process \"poisson\""}),
      workload_case("workload: negative rate", patched(kWorkload, "2}", "-2}"),
                    {"field \"arrival.rate_per_s\""}),
      workload_case("workload: rate so low it overflows simulated time",
                    patched(kWorkload, R"("rate_per_s": 2)", R"("rate_per_s": 1e-300)"),
                    {"workload", "1e9 s"}),
      workload_case("workload: duration beyond simulated time",
                    patched(kWorkload, R"("num_requests": 4)", R"("duration_s": 1e300)"),
                    {"field \"duration_s\"", "1e9"}),
      workload_case("workload: min above max",
                    patched(kWorkload, R"({"distribution": "fixed", "tokens": 16})",
                            R"({"distribution": "uniform", "min": 9, "max": 3})"),
                    {"field \"lengths.prompt.min\"", "exceeds max"}),
      workload_case("workload: no stop condition",
                    patched(kWorkload, R"("num_requests": 4)", R"("description": "")"),
                    {"stop condition"}),
      workload_case("workload: trace file missing", kTraceSpec, {"t.csv", "not found"}),
      {"workload: trace time_scale beyond simulated time",
       {{"w.json",
         patched(kTraceSpec, R"("path": "t.csv")", R"("path": "t.csv", "time_scale": 1e300)")},
        {"t.csv", kPlainHeader + "0,1,1\n5,1,1\n"}},
       run_with({"--workload", "w.json"}),
       kInput,
       {"t.csv", "data row 2", "time_scale"}},

      // Traces.
      trace_case("trace: timestamps go backwards", kPlainHeader + "0,10,10\n2.5,10,10\n1.0,10,10\n",
                 {"t.csv:4", "goes backwards"}),
      trace_case("trace: unrecognised header", "time,in,out\n0,1,1\n",
                 {"t.csv:1", "unrecognised trace header"}),
      trace_case("trace: wrong field count", kPlainHeader + "0,10,10\n1,10\n",
                 {"t.csv:3", "expected 3 comma-separated fields, got 2"}),
      trace_case("trace: zero tokens", kPlainHeader + "0,10,0\n", {"t.csv:2", "output_tokens"}),
      trace_case("trace: not a number", kPlainHeader + "0,ten,10\n",
                 {"t.csv:2", "prompt_tokens", "\"ten\""}),
      trace_case("trace: NaN arrival", kPlainHeader + "nan,10,10\n", {"t.csv:2", "arrival_time_s"}),
      trace_case("trace: arrival beyond simulated time", kPlainHeader + "0,1,1\n1e300,10,10\n",
                 {"t.csv:3", "arrival_time_s"}),
      trace_case("trace: token count overflows 64 bits",
                 kPlainHeader + "0,99999999999999999999,10\n", {"t.csv:2", "prompt_tokens"}),
      trace_case("trace: impossible Azure date", kAzureHeader + "2023-13-16 18:15:46.6805900,1,1\n",
                 {"t.csv:2", "TIMESTAMP"}),
      trace_case("trace: Azure year beyond 64-bit nanoseconds",
                 kAzureHeader + "9999-11-16 18:15:46,1,1\n", {"t.csv:2", "TIMESTAMP"}),
      trace_case("trace: header only", kPlainHeader, {"t.csv", "no rows"}),
      trace_case("trace: empty file", "", {"t.csv", "empty trace"}),
      trace_case("trace: CRLF, error on line 3",
                 "arrival_time_s,prompt_tokens,output_tokens\r\n"
                 "0,10,10\r\n0,-5,10\r\n",
                 {"t.csv:3", "prompt_tokens"}),
      trace_case("trace: Mooncake line without output_length",
                 "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5}\n"
                 "{\"timestamp\": 1, \"input_length\": 5}\n",
                 {"t.csv:2", "missing \"output_length\""}),
      trace_case("trace: Mooncake line nested 100,000 deep",
                 "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5}\n"
                 "{\"timestamp\": 1, \"input_length\": 5, \"output_length\": " +
                     nested(100000) + "}\n",
                 {"t.csv:2", "JSON nested deeper than 128 levels at line 1, column 181"}),
      {"workload: a file that is no workload",
       {{"w.csv", "time,in,out\n0,1,1\n"}},
       run_with({"--workload", "w.csv"}),
       kInput,
       {"w.csv:1", "not a workload", "Azure", "Mooncake"}},
      {"workload: Mooncake trace given directly, timestamp not a number",
       {{"m.jsonl", "{\"timestamp\": \"0\", \"input_length\": 5, \"output_length\": 5}\n"}},
       run_with({"--workload", "m.jsonl"}),
       kInput,
       {"m.jsonl:1", "timestamp", "milliseconds"}},

      // Study journals read by --resume (beside the folder, or in it as older servesims
      // kept them).
      journal_case("journal: a number where a string belongs",
                   R"({"digest":"0","key":5,"result":{}})",
                   {".out.journal/journal.jsonl:2", "field \"key\"", "expected a string"}),
      journal_case("journal: a value changed after it was written",
                   R"({"digest":"0000000000000000","key":"point:0","result":{"x":1}})",
                   {".out.journal/journal.jsonl:2", "field \"result\"", "digest"}),
      journal_case("journal: a wrong byte, not a line cut short", R"({"key":"point:0",,"x":1})",
                   {".out.journal/journal.jsonl:2", "malformed JSON at column 18"}),
      {"journal: in the folder, as older servesims kept it, a result that is no object",
       {{"out", "", Kind::Directory},
        {"out/journal.jsonl", patched(kJournalHeader, "2", "1") + R"({"key":"k","result":1})"
                                                                  "\n"}},
       {"sweep", "--grid", "rate=1", "--num-requests", "4", "--resume", "out"},
       kInput,
       {"out/journal.jsonl:2", "field \"result\"", "expected an object"}},
      config_case("config: top-level replicas beside a disaggregation section",
                  R"({"replicas": 2, "disaggregation": {"prefill": {"replicas": 1},
                                                        "decode": {"replicas": 1}}})",
                  {"field \"replicas\"", "not read with disaggregation"}),
      config_case("config: a NUL byte and a tab in a string",
                  R"({"scheduler": {"name": "a\u0000b\tc"}})", {"scheduler.name", "a\\0b\\tc"}),
  };
}

}  // namespace

TEST_CASE("Malformed inputs give one clear error line, the documented exit code, no output",
          "[bad_input]") {
  const auto all = cases();
  REQUIRE(all.size() >= 40);
  check_cases("bad_input", all);
}

TEST_CASE("Awkward but valid inputs run: CRLF, BOM, equal timestamps, over-long requests",
          "[bad_input]") {
  const servesim::test::ScratchDir scratch("awkward_input");
  const fs::path dir = scratch.path();
  write_inputs(dir, {{"c.json", "{\r\n  \"seed\": 3,\r\n  \"workload\": \"w.json\"\r\n}\r\n"},
                     {"w.json", kTraceSpec},
                     {"t.csv", "\xEF\xBB\xBF" + kAzureHeader +
                                   "2023-11-16 18:15:46.6805900,374,44\r\n"
                                   "2023-11-16 18:15:46.6805900,396,109\r\n"
                                   "2023-11-16 18:15:47,100000,5\r\n"}});
  const auto result =
      run_executable(SERVESIM_EXECUTABLE, {"run", "--config", "c.json", "--json", "--out", "out"},
                     dir, kTimeLimitS);
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.empty());
  const auto summary = nlohmann::json::parse(result.out);
  // The 100,000-token prompt exceeds Llama-3-8B's 8,192 positions: refused, not served.
  CHECK(summary.at("requests_completed") == 2);
  CHECK(summary.at("requests_rejected") == 1);
  CHECK(fs::exists(dir / "out" / "summary.json"));
}
