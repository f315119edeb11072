#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/workload/azure_timestamp.h"
#include "sim/workload/content_namespaces.h"
#include "sim/workload/mooncake_trace.h"
#include "sim/workload/trace_reader.h"
#include "tests/support/test_support.h"
#include "tests/support/workload_test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

constexpr const char* kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

std::filesystem::path conversation_trace() {
  return test::shared_data_dir() / "traces" / "AzureLLMInferenceTrace_conv.csv";
}

WorkloadSpec trace_spec(const std::filesystem::path& path, double time_scale) {
  return test::spec_from_text(R"({"arrival": {"process": "trace"},
      "lengths": {"distribution": "trace"},
      "trace": {"path": ")" + path.string() +
                              R"(", "time_scale": )" + std::to_string(time_scale) + "}}");
}

}  // namespace

TEST_CASE("Azure timestamps parse exactly, to the nanosecond", "[workload]") {
  const auto a = parse_azure_timestamp_ns("2023-11-16 18:15:46.6805900");
  const auto b = parse_azure_timestamp_ns("2023-11-17 00:00:00");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*b - *a == (5 * 3600 + 44 * 60 + 13) * 1'000'000'000LL + 319'410'000);
  CHECK(*b == 19678LL * 86400 * 1'000'000'000);  // days since 1970-01-01
  CHECK_FALSE(parse_azure_timestamp_ns("2023-02-30 00:00:00"));
  CHECK_FALSE(parse_azure_timestamp_ns("2023-11-16 24:00:00"));
  CHECK_FALSE(parse_azure_timestamp_ns("2023-11-16 18:15:46."));
  CHECK_FALSE(parse_azure_timestamp_ns("2023-11-16 18:15:46.1234567890"));
  CHECK_FALSE(parse_azure_timestamp_ns("16/11/2023 18:15:46"));
}

TEST_CASE("Azure trace: arrivals from the first row, CRLF accepted", "[workload]") {
  const Trace trace = parse_trace_text(
      "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
      "2023-11-16 18:15:46.6805900,374,44\r\n"
      "2023-11-16 18:15:50.9951690,396,109\r\n"
      "2023-11-16 18:15:50.9951690,10,1\r\n",
      "t.csv");
  REQUIRE(trace.size() == 3);
  CHECK(trace.arrivals[0].ns() == 0);
  CHECK(trace.arrivals[1].ns() == 4'314'579'000);
  CHECK(trace.arrivals[2] == trace.arrivals[1]);  // equal timestamps are fine
  CHECK(trace.lengths[1] == LengthPair{396, 109});
}

TEST_CASE("plain trace: arrival times as written", "[workload]") {
  const Trace trace = parse_trace_text(
      "arrival_time_s,prompt_tokens,output_tokens\n0.5,100,20\n\n2.25,50,10\n", "p.csv");
  REQUIRE(trace.size() == 2);
  CHECK(trace.arrivals[0].ns() == 500'000'000);
  CHECK(trace.arrivals[1].ns() == 2'250'000'000);
  CHECK(trace.lengths[0] == LengthPair{100, 20});
}

TEST_CASE("trace errors name the file and the line", "[workload]") {
  const std::string ok_row = "2023-11-16 18:15:46.6805900,374,44\n";
  CHECK_THROWS_WITH(parse_trace_text("time,prompt,output\n1,2,3\n", "h.csv"),
                    Contains("h.csv:1") && Contains("header"));
  CHECK_THROWS_WITH(
      parse_trace_text(kAzureHeader + ok_row + "2023-11-16 18:15:47,x12,4\n", "n.csv"),
      Contains("n.csv:3") && Contains("ContextTokens") && Contains("x12"));
  CHECK_THROWS_WITH(parse_trace_text(kAzureHeader + ok_row + "2023-11-16 18:15:47,12\n", "c.csv"),
                    Contains("c.csv:3") && Contains("3 comma-separated fields"));
  CHECK_THROWS_WITH(parse_trace_text(kAzureHeader + ok_row + "2023-11-16 18:15:47,-5,4\n", "m.csv"),
                    Contains("m.csv:3") && Contains("positive"));
  CHECK_THROWS_WITH(
      parse_trace_text("arrival_time_s,prompt_tokens,output_tokens\n1,2,0\n", "z.csv"),
      Contains("z.csv:2") && Contains("output_tokens"));
  CHECK_THROWS_WITH(
      parse_trace_text(kAzureHeader + ok_row + "2023-11-16 18:15:45.0,12,4\n", "d.csv"),
      Contains("d.csv:3") && Contains("backwards"));
  CHECK_THROWS_WITH(parse_trace_text(kAzureHeader + ok_row + "2023-11-16 18:15,12,4\n", "s.csv"),
                    Contains("s.csv:3") && Contains("TIMESTAMP"));
  CHECK_THROWS_WITH(parse_trace_text(kAzureHeader, "e.csv"),
                    Contains("e.csv") && Contains("no rows"));
  CHECK_THROWS_WITH(parse_trace_text("", "f.csv"), Contains("f.csv") && Contains("empty"));
  CHECK_THROWS_AS(read_trace_file("/nonexistent/trace.csv"), InputError);
}

TEST_CASE("Mooncake trace: JSON lines, millisecond timestamps as written", "[workload]") {
  const Trace trace = parse_trace_text(
      "\xEF\xBB\xBF{\"timestamp\": 0, \"input_length\": 6758, \"output_length\": 500, "
      "\"hash_ids\": [0, 1]}\r\n\n"
      "{\"timestamp\": 1500, \"input_length\": 90, \"output_length\": 3, \"hash_ids\": []}\n"
      "{\"timestamp\": 2000.5, \"input_length\": 7, \"output_length\": 1}\n",
      "m.jsonl");
  REQUIRE(trace.size() == 3);
  CHECK(trace.arrivals[0].ns() == 0);
  CHECK(trace.arrivals[1].ns() == 1'500'000'000);
  CHECK(trace.arrivals[2].ns() == 2'000'500'000);
  CHECK(trace.lengths[0] == LengthPair{6758, 500});
  CHECK(trace.lengths[2] == LengthPair{7, 1});
}

TEST_CASE("Mooncake trace errors name the file, the line and what was expected", "[workload]") {
  const std::string ok = "{\"timestamp\": 10, \"input_length\": 5, \"output_length\": 5}\n";
  CHECK_THROWS_WITH(parse_trace_text(ok + "{\"timestamp\": 20, \"input_length\": 5}\n", "a"),
                    Contains("a:2") && Contains("output_length"));
  CHECK_THROWS_WITH(parse_trace_text(ok + "{\"timestamp\": 5, \"input_length\": 5, "
                                          "\"output_length\": 5}\n",
                                     "b"),
                    Contains("b:2") && Contains("backwards"));
  CHECK_THROWS_WITH(parse_trace_text(ok + "{\"timestamp\": 20, \"input_length\": 0, "
                                          "\"output_length\": 5}\n",
                                     "c"),
                    Contains("c:2") && Contains("input_length") && Contains("positive"));
  CHECK_THROWS_WITH(parse_trace_text(ok + "{\"timestamp\": 20, \"input_length\": 5, "
                                          "\"output_length\": 5, \"prompt\": 1}\n",
                                     "d"),
                    Contains("d:2") && Contains("unknown key \"prompt\""));
  CHECK_THROWS_WITH(parse_trace_text(ok + "{\"timestamp\": 20, \"input_length\": 5,\n", "e"),
                    Contains("e:2") && Contains("one JSON object a line"));
  CHECK_THROWS_WITH(parse_trace_text("{\"timestamp\": -1, \"input_length\": 5, "
                                     "\"output_length\": 5}\n",
                                     "f"),
                    Contains("f:1") && Contains("milliseconds"));
}

TEST_CASE("Mooncake trace: each prompt is its hash ids' 512-token blocks, the last one cut",
          "[workload]") {
  const auto data = test::source_dir() / "tests" / "workload" / "data" / "mooncake_trace.jsonl";
  const Trace trace = read_trace_file(data);
  REQUIRE(trace.has_content());
  const auto id = [](std::uint64_t hash) { return mix_ids(kMooncakeContent, hash); };
  CHECK(trace.content(0) == TokenContent{{id(0), 512}, {id(1), 88}});
  CHECK(trace.content(1) == TokenContent{{id(0), 512}, {id(2), 188}});
  CHECK(trace.content(2) == TokenContent{{id(3), 90}});
  CHECK(trace.content(3) == TokenContent{{id(0), 512}, {id(1), 512}, {id(4), 76}});
  // Fewer ids than blocks: the tokens past them are the request's own.
  const std::uint64_t one[] = {7};
  CHECK(mooncake_content(one, 2000) == TokenContent{{id(7), 512}});
  CHECK(mooncake_content({}, 2000).empty());
  // The replayed requests carry it.
  const auto source = make_workload_source(trace_spec(data, 1.0), RngStreams(3));
  std::size_t row = 0;
  while (source->next()) {
    REQUIRE(source->last_content() != nullptr);
    CHECK(*source->last_content() == trace.content(row++));
  }
  CHECK(row == 4);
  // CSV traces say nothing of their content.
  const Trace plain = read_trace_file(data.parent_path() / "plain_trace.csv");
  CHECK_FALSE(plain.has_content());
  const auto plain_source =
      make_workload_source(trace_spec(data.parent_path() / "plain_trace.csv", 1.0), RngStreams(3));
  REQUIRE(plain_source->next());
  CHECK(plain_source->last_content() == nullptr);
}

TEST_CASE("Mooncake trace: bad hash_ids and lengths name the file, the line and the field",
          "[workload]") {
  const std::string ok = "{\"timestamp\": 10, \"input_length\": 5, \"output_length\": 5}\n";
  const auto line = [](const std::string& fields) {
    return "{\"timestamp\": 20, " + fields + "}\n";
  };
  // ceil(1025 / 512) = 3 blocks at most.
  CHECK_THROWS_WITH(
      parse_trace_text(ok + line(R"("input_length": 1025, "output_length": 1, )"
                                 R"("hash_ids": [1, 2, 3, 4])"),
                       "a"),
      Contains("a:2") && Contains("hash_ids") && Contains("4 block ids") && Contains("at most 3"));
  CHECK_NOTHROW(parse_trace_text(
      ok + line(R"("input_length": 1025, "output_length": 1, "hash_ids": [1, 2, 3])"), "a"));
  CHECK_THROWS_WITH(
      parse_trace_text(ok + line(R"("input_length": 5, "output_length": 1, "hash_ids": [-1])"),
                       "b"),
      Contains("b:2") && Contains("hash_ids") && Contains("-1"));
  CHECK_THROWS_WITH(
      parse_trace_text(ok + line(R"("input_length": 5, "output_length": 1, "hash_ids": 3)"), "c"),
      Contains("c:2") && Contains("hash_ids") && Contains("array"));
  CHECK_THROWS_WITH(parse_trace_text(ok + line(R"("input_length": -5, "output_length": 1)"), "d"),
                    Contains("d:2") && Contains("input_length") && Contains("-5"));
  CHECK_THROWS_WITH(parse_trace_text(ok + line(R"("input_length": 5.5, "output_length": 1)"), "e"),
                    Contains("e:2") && Contains("input_length") && Contains("whole"));
  CHECK_THROWS_WITH(parse_trace_text(ok + line(R"("input_length": 5, "output_length": "7")"), "f"),
                    Contains("f:2") && Contains("output_length"));
  CHECK_THROWS_WITH(parse_trace_text(ok + "{\"timestamp\": 20, \"input_length\": 5]\n", "g"),
                    Contains("g:2") && Contains("malformed JSON"));
}

TEST_CASE("a trace's row range: first_row to end_row, arrivals from the first one kept",
          "[workload]") {
  const auto data = test::source_dir() / "tests" / "workload" / "data" / "mooncake_trace.jsonl";
  const auto spec_text = [&](const std::string& keys) {
    return R"({"arrival": {"process": "trace"}, "lengths": {"distribution": "trace"},
        "trace": {"path": ")" +
           data.string() + "\", " + keys + "}}";
  };
  const WorkloadSpec middle = test::spec_from_text(spec_text(R"("first_row": 2, "end_row": 4)"));
  const auto requests = test::generate(middle);
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].arrival.ns() == 0);  // row 2 at 250 ms
  CHECK(requests[1].arrival.ns() == 1'250'000'000);
  CHECK(requests[1].prompt_tokens == 1100);
  CHECK(requests[0].id == 0);
  const auto source = make_workload_source(middle, RngStreams(1));
  source->next();
  CHECK(source->last_content()->front().id == mix_ids(kMooncakeContent, 3));
  // Round trip, and the default range written as nothing.
  CHECK(parse_workload_spec(workload_spec_to_json(middle), "test.json", "/") == middle);
  CHECK_FALSE(workload_spec_to_json(test::spec_from_text(spec_text(R"("time_scale": 1)")))["trace"]
                  .contains("first_row"));
  CHECK(test::generate(test::spec_from_text(spec_text(R"("first_row": 0, "end_row": 1)"))).size() ==
        1);
  // Out of range, or not a row.
  CHECK_THROWS_WITH(test::generate(test::spec_from_text(spec_text(R"("first_row": 4)"))),
                    Contains("test.json") && Contains("trace.first_row") && Contains("4 rows"));
  CHECK_THROWS_WITH(test::generate(test::spec_from_text(spec_text(R"("end_row": 9)"))),
                    Contains("trace.end_row") && Contains("4 rows"));
  CHECK_THROWS_WITH(test::spec_from_text(spec_text(R"("first_row": 3, "end_row": 3)")),
                    Contains("end_row") && Contains("after first_row"));
  CHECK_THROWS_WITH(test::spec_from_text(spec_text(R"("first_row": -1)")),
                    Contains("first_row") && Contains("non-negative integer"));
  CHECK_THROWS_WITH(test::spec_from_text(spec_text(R"("first_row": 1.5)")), Contains("first_row"));
}

TEST_CASE("a workload file is told apart by its content", "[workload]") {
  const auto data = test::source_dir() / "tests" / "workload" / "data";
  for (const char* trace : {"azure_trace.csv", "plain_trace.csv", "mooncake_trace.jsonl"}) {
    INFO(trace);
    CHECK(workload_file_kind(data / trace) == WorkloadFileKind::Trace);
    CHECK(read_trace_file(data / trace).size() >= 4);
  }
  CHECK(workload_file_kind(test::source_dir() / "workloads" / "sharegpt.json") ==
        WorkloadFileKind::Spec);
  test::ScratchDir dir("workload_kind");
  CHECK(workload_file_kind(dir.write("one_line.json", R"({"arrival": {"process": "poisson"}})")) ==
        WorkloadFileKind::Spec);
  CHECK_THROWS_WITH(workload_file_kind(data / "unknown_trace.csv"),
                    Contains("unknown_trace.csv:1") && Contains("not a workload") &&
                        Contains("Azure") && Contains("Mooncake"));
  CHECK_THROWS_WITH(workload_file_kind(dir.write("empty.csv", "\n")), Contains("empty"));
}

TEST_CASE("the Mooncake traces load in full", "[workload]") {
  const auto shared = test::shared_data_path("traces/mooncake/conversation_trace.jsonl");
  if (!shared) return;
  const std::filesystem::path conversation = *shared;
  const std::filesystem::path folder = conversation.parent_path();
  const Trace trace = read_trace_file(conversation);
  REQUIRE(trace.size() == 12031);
  double input_sum = 0;
  for (const auto& lengths : trace.lengths)
    input_sum += static_cast<double>(lengths.prompt_tokens);
  CHECK(input_sum / 12031 == Approx(12035).epsilon(0.01));
  CHECK(trace.arrivals.back().seconds() == Approx(3536.999));  // exact: whole milliseconds
  CHECK(read_trace_file(folder / "synthetic_trace.jsonl").size() == 3993);
}

TEST_CASE("the Azure conversation trace replays in full", "[workload]") {
  if (!test::shared_data_path("traces/AzureLLMInferenceTrace_conv.csv")) return;
  const auto requests = test::generate(trace_spec(conversation_trace(), 1.0));
  REQUIRE(requests.size() == 19366);
  double context_sum = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    REQUIRE(requests[i].id == static_cast<std::int64_t>(i));
    if (i > 0) REQUIRE(requests[i].arrival >= requests[i - 1].arrival);
    context_sum += static_cast<double>(requests[i].prompt_tokens);
  }
  CHECK(context_sum / 19366 == Approx(1155).epsilon(0.01));
  CHECK(requests.front().arrival.ns() == 0);
  CHECK(requests.back().arrival.seconds() == Approx(3501.72).margin(0.01));
  CHECK(requests[1].arrival.ns() == 4'314'579'000);  // exact, not rounded through a double

  const auto stretched = test::generate(trace_spec(conversation_trace(), 2.0));
  REQUIRE(stretched.size() == 19366);
  CHECK(stretched.back().arrival.ns() == 2 * requests.back().arrival.ns());
  CHECK(stretched[1].arrival.ns() == 2 * requests[1].arrival.ns());
}

TEST_CASE("trace arrivals with synthetic lengths, and stop conditions on a trace", "[workload]") {
  test::ScratchDir dir("workload_trace");
  dir.write("t.csv", "arrival_time_s,prompt_tokens,output_tokens\n0,5,5\n1,5,5\n2,5,5\n3,5,5\n");
  const auto base = R"({"arrival": {"process": "trace"},
      "lengths": {"distribution": "independent",
                  "prompt": {"distribution": "fixed", "tokens": 7},
                  "output": {"distribution": "fixed", "tokens": 8}},
      "trace": {"path": "t.csv"})";
  const auto all = test::generate(test::spec_from_text(std::string(base) + "}", dir.path()));
  REQUIRE(all.size() == 4);
  CHECK(all[3].prompt_tokens == 7);
  CHECK(all[3].arrival.ns() == 3'000'000'000);
  const auto until_two =
      test::generate(test::spec_from_text(std::string(base) + R"(, "duration_s": 2})", dir.path()));
  CHECK(until_two.size() == 2);  // [0, 2): the row at exactly 2 s is not kept
  const auto first_two = test::generate(
      test::spec_from_text(std::string(base) + R"(, "num_requests": 2})", dir.path()));
  CHECK(first_two.size() == 2);
}
