#include <catch2/catch.hpp>

#include <sstream>

#include "sim/calibration/measurement.h"
#include "sim/calibration/measurement_sources.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

std::vector<Measurement> parse(const std::string& records) {
  const std::string text = R"({"format": "servesim-measurements", "version": 1, "device": "D",
                               "measurements": [)" +
                           records + "]}";
  return measurements_from_json(parse_json_text(text, "m.json"), "m.json");
}

const char* const kGemm =
    R"({"operator_kind": "gemm", "repeats": 5, "median_s": 1e-4, "m": 16, "n": 4096,
        "k": 4096, "dtype": "bf16", "operator": "qkv", "model": "x", "tp": 2})";

}  // namespace

TEST_CASE("measurement records of every kind survive a write and a read", "[calibration]") {
  const auto records = parse(std::string(kGemm) + R"(,
    {"operator_kind": "decode_attention", "device_name": "H", "repeats": 3, "median_s": 2e-5,
     "min_s": 1e-5, "max_s": 3e-5, "batch": 8, "context_tokens": 1024, "num_heads": 32,
     "num_kv_heads": 8, "head_dim": 128, "block_size": 16, "dtype": "fp16"},
    {"operator_kind": "prefill_attention", "repeats": 3, "median_s": 2e-4, "chunk_tokens": 512,
     "context_tokens": 256, "num_heads": 32, "num_kv_heads": 8, "head_dim": 128},
    {"operator_kind": "memcpy_d2d", "repeats": 20, "median_s": 3.1e-5, "size_bytes": 67108864,
     "bandwidth_bytes_per_s": 4.3e12},
    {"operator_kind": "all_reduce", "repeats": 10, "median_s": 5e-5, "size_bytes": 1048576,
     "ranks": 4},
    {"operator_kind": "host_overhead", "repeats": 1, "median_s": 1e-3, "batch": 32},
    {"operator_kind": "iteration", "repeats": 1, "median_s": 0.02, "model": "llama-3-8b",
     "tp": 1, "pp": 1, "prefill_sequences": 1, "prefill_tokens": 100,
     "prefill_context_tokens": 100, "prefill_attention_pairs": 5050, "decode_sequences": 4,
     "decode_context_tokens": 4000, "predicted_s": 0.019})");
  REQUIRE(records.size() == 7);
  CHECK(records[0].device_name == "D");  // from the document when the record has none
  CHECK(records[0].class_name() == "gemm.qkv");
  CHECK(records[0].tp == 2);
  CHECK(records[1].device_name == "H");
  CHECK(records[1].where == "m.json: measurements[1]");
  CHECK(records[2].batch == 1);
  CHECK(records[6].shape.sampled_sequences == 5);

  std::ostringstream out;
  write_measurements_json(out, "D", records);
  const auto again = measurements_from_json(parse_json_text(out.str(), "again"), "again");
  REQUIRE(again.size() == records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    INFO(i);
    CHECK(again[i].kind == records[i].kind);
    CHECK(again[i].median_s == records[i].median_s);
    CHECK(again[i].class_name() == records[i].class_name());
    CHECK(again[i].m == records[i].m);
    CHECK(again[i].context_tokens == records[i].context_tokens);
    CHECK(again[i].size_bytes == records[i].size_bytes);
    CHECK(again[i].shape.prefill_attention_pairs == records[i].shape.prefill_attention_pairs);
    CHECK(again[i].min_s == records[i].min_s);
  }
}

TEST_CASE("a record's timing is read, written back and keeps its class apart", "[calibration]") {
  const auto records = parse(R"(
    {"operator_kind": "gemm", "repeats": 5, "median_s": 1e-4, "m": 16, "n": 4096, "k": 4096,
     "dtype": "bf16", "operator": "qkv", "timing": "graph", "calls_per_sample": 20},
    {"operator_kind": "gemm", "repeats": 5, "median_s": 1e-4, "m": 16, "n": 4096, "k": 4096,
     "dtype": "bf16", "operator": "o", "timing": "stream", "calls_per_sample": 4},
    {"operator_kind": "gemm", "repeats": 5, "median_s": 1e-4, "m": 16, "n": 4096, "k": 4096,
     "dtype": "bf16", "operator": "o", "timing": "per_call"})");
  REQUIRE(records.size() == 3);
  CHECK(records[0].timing == "graph");
  CHECK(records[0].calls_per_sample == 20);
  // Back-to-back times are never pooled with per-call ones; per_call keeps the old classes.
  CHECK(records[0].class_name() == "gemm.qkv.graph");
  CHECK(records[1].class_name() == "gemm.o.stream");
  CHECK(records[2].class_name() == "gemm.o");
  CHECK(records[2].calls_per_sample == 0);
  CHECK(parse(kGemm)[0].timing.empty());  // files before the field: not stated

  std::ostringstream out;
  write_measurements_json(out, "D", records);
  const auto again = measurements_from_json(parse_json_text(out.str(), "again"), "again");
  REQUIRE(again.size() == 3);
  for (std::size_t i = 0; i < again.size(); ++i) {
    CHECK(again[i].timing == records[i].timing);
    CHECK(again[i].calls_per_sample == records[i].calls_per_sample);
  }
  std::ostringstream plain;
  write_measurements_json(plain, "D", parse(kGemm));
  CHECK(plain.str().find("timing") == std::string::npos);

  const std::string shape =
      R"({"operator_kind": "gemm", "repeats": 1, "median_s": 1e-4, "m": 1, "n": 8, "k": 8,
          "dtype": "bf16", )";
  CHECK_THROWS_WITH(parse(shape + R"("timing": "events"})"),
                    Contains("measurements[0].timing") && Contains("per_call, stream, graph"));
  CHECK_THROWS_WITH(parse(shape + R"("timing": "graph"})"),
                    Contains("measurements[0].calls_per_sample") && Contains("required"));
  CHECK_THROWS_WITH(parse(shape + R"("timing": "per_call", "calls_per_sample": 3})"),
                    Contains("measurements[0].calls_per_sample"));
  CHECK_THROWS_WITH(parse(shape + R"("calls_per_sample": 3})"),
                    Contains("measurements[0].calls_per_sample"));
}

TEST_CASE("bad measurement files are refused naming the file, the record and the field",
          "[calibration]") {
  CHECK_THROWS_WITH(
      parse(R"({"operator_kind": "gemm", "repeats": 1, "median_s": 1e-4,
                              "m": 16, "n": 8, "dtype": "fp16"})"),
      Contains("m.json") && Contains("measurements[0].k") && Contains("required but missing"));
  CHECK_THROWS_WITH(parse(R"({"operator_kind": "all_reduce", "repeats": 1, "median_s": "2 ms",
                              "size_bytes": 8, "ranks": 2})"),
                    Contains("measurements[0].median_s") && Contains("expected a number"));
  CHECK_THROWS_WITH(parse(R"({"operator_kind": "all_reduce", "repeats": 1, "median_s": -1,
                              "size_bytes": 8, "ranks": 2})"),
                    Contains("measurements[0].median_s") && Contains("positive"));
  CHECK_THROWS_WITH(parse(R"({"operator_kind": "conv2d", "repeats": 1, "median_s": 1})"),
                    Contains("unknown kind \"conv2d\"") && Contains("gemm, decode_attention"));
  CHECK_THROWS_WITH(parse(R"({"operator_kind": "all_reduce", "repeats": 1, "median_s": 1,
                              "size_bytes": 8, "ranks": 2, "size_mb": 1})"),
                    Contains("measurements[0].size_mb") && Contains("unknown key"));
  CHECK_THROWS_WITH(parse(""), Contains("m.json") && Contains("no records"));
  CHECK_THROWS_WITH(parse(R"({"operator_kind": "gemm", "repeats": 1, "median_s": 1e-4,
                              "m": 1, "n": 8, "k": 8, "dtype": "fp13"})"),
                    Contains("measurements[0].dtype"));
  CHECK_THROWS_WITH(
      measurements_from_json(parse_json_text(R"({"format": "other", "version": 1})", "f.json"),
                             "f.json"),
      Contains("f.json") && Contains("servesim-measurements"));

  const test::ScratchDir dir("calibration_empty");
  CHECK_THROWS_WITH(read_measurements_file(dir.write("empty.json", "")),
                    Contains("empty.json") && Contains("empty"));
  CHECK_THROWS_WITH(load_measurements({dir.path() / "missing.json"}), Contains("missing.json"));
  CHECK_THROWS_WITH(load_measurements({dir.write("notes.txt", "x")}), Contains("notes.txt"));
}

TEST_CASE("calibrated profiles name data files from the data root", "[calibration]") {
  CHECK(data_relative_path("/a/b/shared/data/profiles/vidur/compute/a100/x/mlp.csv") ==
        "profiles/vidur/compute/a100/x/mlp.csv");
  CHECK(data_relative_path("runs/h200.json") == "runs/h200.json");
}
