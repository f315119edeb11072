#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "validation/measurement.h"
#include "validation/reference_check.h"
#include "validation/timing_stats.h"

namespace sv = servesim::validation;

TEST_CASE("timing stats of an odd count take the middle sample", "[validation]") {
  const std::vector<double> samples_s{3.0, 1.0, 7.0, 2.0, 5.0};
  const sv::TimingStats stats = sv::compute_timing_stats(samples_s);
  CHECK(stats.median_s == 3.0);
  CHECK(stats.min_s == 1.0);
  CHECK(stats.max_s == 7.0);
}

TEST_CASE("timing stats of an even count average the two middle samples", "[validation]") {
  const std::vector<double> samples_s{4.0, 1.0, 10.0, 2.0};
  const sv::TimingStats stats = sv::compute_timing_stats(samples_s);
  CHECK(stats.median_s == 3.0);
  CHECK(stats.min_s == 1.0);
  CHECK(stats.max_s == 10.0);
  CHECK(sv::compute_timing_stats(std::vector<double>{0.5}).median_s == 0.5);
}

TEST_CASE("timing stats refuse an empty sample set", "[validation]") {
  CHECK_THROWS_AS(sv::compute_timing_stats(std::vector<double>{}), std::invalid_argument);
}

TEST_CASE("copy bandwidth counts read plus write against the median", "[validation]") {
  CHECK(sv::achieved_bandwidth_bytes_per_s(1'000'000, 0.5) == Approx(2e6));
  CHECK_THROWS_AS(sv::achieved_bandwidth_bytes_per_s(1, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(sv::achieved_bandwidth_bytes_per_s(1, -1.0), std::invalid_argument);

  // 64 MiB in a 31.2 us median: 2 x 67108864 / 31.2e-6 B/s, about 4.3 TB/s.
  const std::vector<double> samples_s{40e-6, 31.2e-6, 30e-6};
  const sv::Measurement m = sv::make_copy_measurement("H200", "memcpy_d2d", 64ull << 20, samples_s);
  CHECK(m.kind == servesim::MeasurementKind::MemcpyD2D);
  CHECK(m.repeats == 3);
  CHECK(m.median_s == 31.2e-6);
  CHECK(m.min_s == 30e-6);
  CHECK(m.max_s == 40e-6);
  CHECK(m.size_bytes == 67108864.0);
  REQUIRE(m.bandwidth_bytes_per_s.has_value());
  CHECK(*m.bandwidth_bytes_per_s == Approx(2.0 * 67108864 / 31.2e-6));
  CHECK(*m.bandwidth_bytes_per_s == Approx(4.30e12).epsilon(0.01));
  CHECK(sv::make_copy_measurement("H200", servesim::MeasurementKind::CopyKernelD2D, 4096, samples_s)
            .kind == servesim::MeasurementKind::CopyKernelD2D);
  CHECK_THROWS_AS(sv::make_copy_measurement("H200", "gemm", 4096, samples_s),
                  std::invalid_argument);
}

TEST_CASE("measurement JSON round-trips through a parser", "[validation]") {
  const std::vector<double> slow{0.5, 0.25, 0.2};
  const std::vector<double> fast{1e-6, 9e-7, 2e-6, 1e-6, 1.5e-6, 1e-6, 1e-6};
  const std::vector<sv::Measurement> measurements{
      sv::make_copy_measurement("NVIDIA H200", "copy_kernel_d2d", 1ull << 36, slow),
      sv::make_copy_measurement("NVIDIA H200", "memcpy_d2d", 4096, fast)};
  std::ostringstream out;
  sv::write_measurements_json(out, "NVIDIA H200", measurements);
  const nlohmann::json doc = nlohmann::json::parse(out.str());

  CHECK(doc.at("format") == "servesim-measurements");
  CHECK(doc.at("version") == 1);
  CHECK(doc.at("device") == "NVIDIA H200");
  REQUIRE(doc.at("measurements").size() == 2);
  const nlohmann::json& first = doc.at("measurements").at(0);
  CHECK(first.at("device_name") == "NVIDIA H200");
  CHECK(first.at("operator_kind") == "copy_kernel_d2d");
  CHECK(first.at("size_bytes").get<std::uint64_t>() == (1ull << 36));
  CHECK(first.at("repeats") == 3);
  CHECK(first.at("median_s").get<double>() == 0.25);
  CHECK(first.at("min_s").get<double>() == 0.2);
  CHECK(first.at("max_s").get<double>() == 0.5);
  CHECK(first.at("bandwidth_bytes_per_s").get<double>() == 2.0 * (1ull << 36) / 0.25);
  CHECK_FALSE(first.contains("model"));
  CHECK_FALSE(first.contains("tp"));
  const nlohmann::json& second = doc.at("measurements").at(1);
  CHECK(second.at("operator_kind") == "memcpy_d2d");
  CHECK(second.at("size_bytes").get<std::uint64_t>() == 4096);
  // Doubles must survive exactly: calibration compares them to other runs.
  CHECK(second.at("min_s").get<double>() == 9e-7);
}

TEST_CASE("GEMM and attention records carry the shape fields of the contract", "[validation]") {
  const std::vector<double> samples{3e-5, 1e-5, 2e-5};
  sv::Measurement gemm = sv::make_measurement(
      "NVIDIA H100", sv::GemmShape{"mlp_up", 16, 28672, 4096, sv::ElementType::BF16}, samples);
  gemm.model = "llama-3-8b";
  const sv::HeadShape heads{32, 8, 128};
  const sv::Measurement decode = sv::make_measurement(
      "NVIDIA H100", sv::DecodeAttentionShape{8, 2048, heads, 16, sv::ElementType::FP16}, samples);
  const sv::Measurement prefill = sv::make_measurement(
      "NVIDIA H100", sv::PrefillAttentionShape{2, 512, 1024, heads, sv::ElementType::BF16},
      samples);
  std::ostringstream out;
  sv::write_measurements_json(out, "NVIDIA H100",
                              std::vector<sv::Measurement>{gemm, decode, prefill});
  const nlohmann::json list = nlohmann::json::parse(out.str()).at("measurements");
  REQUIRE(list.size() == 3);

  const nlohmann::json& g = list.at(0);
  CHECK(g.at("operator_kind") == "gemm");
  CHECK(g.at("operator") == "mlp_up");
  CHECK(g.at("m") == 16);
  CHECK(g.at("n") == 28672);
  CHECK(g.at("k") == 4096);
  CHECK(g.at("dtype") == "bf16");
  CHECK(g.at("model") == "llama-3-8b");
  CHECK_FALSE(g.contains("tp"));  // 1, the format's default
  CHECK(g.at("median_s").get<double>() == 2e-5);
  CHECK(g.at("repeats") == 3);

  const nlohmann::json& d = list.at(1);
  CHECK(d.at("operator_kind") == "decode_attention");
  CHECK(d.at("batch") == 8);
  CHECK(d.at("context_tokens") == 2048);
  CHECK(d.at("num_heads") == 32);
  CHECK(d.at("num_kv_heads") == 8);
  CHECK(d.at("head_dim") == 128);
  CHECK(d.at("block_size") == 16);
  CHECK(d.at("dtype") == "fp16");

  const nlohmann::json& p = list.at(2);
  CHECK(p.at("operator_kind") == "prefill_attention");
  CHECK(p.at("batch") == 2);
  CHECK(p.at("chunk_tokens") == 512);
  CHECK(p.at("context_tokens") == 1024);
  CHECK(p.at("num_kv_heads") == 8);
  CHECK_FALSE(p.contains("block_size"));
}

TEST_CASE("iteration records carry the batch shape and the prediction", "[validation]") {
  servesim::BatchShape shape;
  shape.add_prefill(100, 28);
  shape.add_decode(500);
  shape.add_decode(700);
  sv::Measurement m = sv::make_measurement("NVIDIA H200", sv::IterationRecord{2, shape, 0.031},
                                           std::vector<double>{0.03, 0.034});
  m.model = "llama-2-70b";
  m.tp = 4;
  std::ostringstream out;
  sv::write_measurements_json(out, "NVIDIA H200", std::vector<sv::Measurement>{m});
  const nlohmann::json r = nlohmann::json::parse(out.str()).at("measurements").at(0);
  CHECK(r.at("operator_kind") == "iteration");
  CHECK(r.at("model") == "llama-2-70b");
  CHECK(r.at("tp") == 4);
  CHECK(r.at("pp") == 2);
  CHECK(r.at("prefill_sequences") == 1);
  CHECK(r.at("prefill_tokens") == 100);
  CHECK(r.at("prefill_context_tokens") == 128);
  CHECK(r.at("prefill_attention_pairs").get<double>() == 100.0 * 28 + 100.0 * 101 / 2);
  CHECK(r.at("decode_sequences") == 2);
  CHECK(r.at("decode_context_tokens") == 1200);
  CHECK(r.at("predicted_s").get<double>() == 0.031);
  CHECK(r.at("median_s").get<double>() == Approx(0.032));
}

// The harness writes with the simulator's writer: what it writes, calibrate and validate read.
TEST_CASE("the harness's records read back through the simulator's reader", "[validation]") {
  const std::vector<double> samples{3e-5, 1e-5, 2e-5};
  sv::Measurement gemm = sv::make_measurement(
      "NVIDIA H200", sv::GemmShape{"mlp_down", 64, 4096, 14336, sv::ElementType::BF16}, samples);
  gemm.model = "llama-3-8b";
  gemm.tp = 2;
  servesim::BatchShape shape;
  shape.add_prefill(100, 28);
  shape.add_decode(500);
  sv::Measurement iteration =
      sv::make_measurement("NVIDIA H200", sv::IterationRecord{1, shape, 0.02}, samples);
  iteration.model = "llama-3-8b";
  const sv::Measurement copy =
      sv::make_copy_measurement("NVIDIA H200", "copy_kernel_d2d", 1 << 20, samples);
  std::ostringstream out;
  sv::write_measurements_json(out, "NVIDIA H200",
                              std::vector<sv::Measurement>{gemm, iteration, copy});
  const std::vector<servesim::Measurement> back =
      servesim::measurements_from_json(nlohmann::json::parse(out.str()), "harness.json");
  REQUIRE(back.size() == 3);
  CHECK(back[0].kind == servesim::MeasurementKind::Gemm);
  CHECK(back[0].class_name() == "gemm.mlp_down");
  CHECK(back[0].m == 64);
  CHECK(back[0].k == 14336);
  CHECK(back[0].dtype == servesim::DType::BF16);
  CHECK(back[0].tp == 2);
  CHECK(back[0].model == "llama-3-8b");
  CHECK(back[0].median_s == 2e-5);
  CHECK(back[0].repeats == 3);
  CHECK(back[0].timing.empty());  // not stamped: not stated
  CHECK(back[1].kind == servesim::MeasurementKind::Iteration);
  CHECK(back[1].shape.prefill_attention_pairs == shape.prefill_attention_pairs);
  CHECK(back[1].shape.decode_context_tokens == 500);
  CHECK(back[1].predicted_s == 0.02);
  CHECK(back[2].kind == servesim::MeasurementKind::CopyKernelD2D);
  CHECK(back[2].size_bytes == 1 << 20);
}

TEST_CASE("an empty measurement list still writes a valid document", "[validation]") {
  std::ostringstream out;
  sv::write_measurements_json(out, "none", {});
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  CHECK(doc.at("measurements").is_array());
  CHECK(doc.at("measurements").empty());
}

TEST_CASE("reference check reports the first mismatching byte", "[validation]") {
  std::vector<std::byte> expected(1000);
  sv::fill_pattern(expected, 3);
  std::vector<std::byte> actual = expected;
  CHECK_FALSE(sv::first_mismatch(expected, actual).has_value());

  actual[917] ^= std::byte{0x01};
  actual[421] ^= std::byte{0x80};
  REQUIRE(sv::first_mismatch(expected, actual).has_value());
  CHECK(*sv::first_mismatch(expected, actual) == 421);

  actual = expected;
  actual[0] = ~actual[0];
  CHECK(sv::first_mismatch(expected, actual) == std::optional<std::size_t>{0});
  actual = expected;
  actual.back() = ~actual.back();
  CHECK(sv::first_mismatch(expected, actual) == std::optional<std::size_t>{999});

  // A short copy mismatches at the first byte it lacks.
  actual.assign(expected.begin(), expected.begin() + 600);
  CHECK(sv::first_mismatch(expected, actual) == std::optional<std::size_t>{600});
  CHECK_FALSE(sv::first_mismatch({}, {}).has_value());
}

TEST_CASE("fill pattern differs between seeds and along the buffer", "[validation]") {
  std::vector<std::byte> a(4096);
  std::vector<std::byte> b(4096);
  sv::fill_pattern(a, 0);
  sv::fill_pattern(b, 1);
  CHECK(sv::first_mismatch(a, b).has_value());
  // No short period: a copy off by one byte, one 16-byte word or one 256-byte block must
  // disagree almost everywhere, not at one lucky byte.
  for (const std::size_t shift : {1, 16, 256}) {
    std::size_t equal_bytes = 0;
    for (std::size_t i = 0; i + shift < a.size(); ++i)
      equal_bytes += a[i] == a[i + shift] ? 1 : 0;
    CHECK(equal_bytes < a.size() / 100);
  }
  sv::fill_pattern(b, 0);
  CHECK_FALSE(sv::first_mismatch(a, b).has_value());
}

// Every gemm record says how it was timed, so per-call and back-to-back times are told apart.
TEST_CASE("gemm records carry their timing mode and calls per sample", "[validation]") {
  const std::vector<double> samples{3e-5, 1e-5, 2e-5};
  const sv::GemmShape shape{"qkv", 1, 6144, 4096, sv::ElementType::BF16};
  sv::Measurement per_call = sv::make_measurement("NVIDIA H200", shape, samples);
  sv::set_timing(per_call, sv::TimingMode::PerCall, 20);
  sv::Measurement graph = sv::make_measurement("NVIDIA H200", shape, samples);
  sv::set_timing(graph, sv::TimingMode::Graph, 50);
  sv::Measurement stream = sv::make_measurement("NVIDIA H200", shape, samples);
  sv::set_timing(stream, sv::TimingMode::Stream, 8);
  std::ostringstream out;
  sv::write_measurements_json(out, "NVIDIA H200",
                              std::vector<sv::Measurement>{per_call, graph, stream});
  const nlohmann::json list = nlohmann::json::parse(out.str()).at("measurements");
  CHECK(list.at(0).at("timing") == "per_call");
  CHECK_FALSE(list.at(0).contains("calls_per_sample"));
  CHECK(list.at(1).at("timing") == "graph");
  CHECK(list.at(1).at("calls_per_sample") == 50);
  CHECK(list.at(2).at("timing") == "stream");
  CHECK(list.at(2).at("calls_per_sample") == 8);
  const std::vector<servesim::Measurement> back =
      servesim::measurements_from_json(nlohmann::json::parse(out.str()), "harness.json");
  REQUIRE(back.size() == 3);
  CHECK(back[0].class_name() == "gemm.qkv");
  CHECK(back[1].class_name() == "gemm.qkv.graph");
  CHECK(back[1].calls_per_sample == 50);
  CHECK(back[2].class_name() == "gemm.qkv.stream");
}
