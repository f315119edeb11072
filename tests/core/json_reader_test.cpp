#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("malformed JSON names the source, line and column", "[config]") {
  REQUIRE_THROWS_WITH(parse_json_text("{\n  \"a\": 1,\n  \"b\": }\n", "x.json"),
                      Contains("x.json") && Contains("malformed JSON at line 3, column"));
  REQUIRE_THROWS_AS(parse_json_text("{\"a\": ", "x.json"), InputError);
  REQUIRE_THROWS_WITH(parse_json_text("{\"a\": 1e400}", "x.json"),
                      Contains("x.json") && Contains("number overflow"));
}

TEST_CASE("a key repeated in one object is refused, but in different objects it is fine",
          "[config]") {
  REQUIRE_THROWS_WITH(parse_json_text(R"({"a": 1, "b": {"c": 2}, "a": 3})", "dup.json"),
                      Contains("dup.json") && Contains("\"a\" appears twice"));
  const auto ok = parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}})", "ok.json");
  REQUIRE(ok["b"]["x"] == 2);
}

TEST_CASE("missing, empty and directory files are input errors", "[config]") {
  test::ScratchDir dir("json_reader_files");
  REQUIRE_THROWS_WITH(read_json_file(dir.path() / "absent.json"), Contains("file not found"));
  REQUIRE_THROWS_WITH(read_json_file(dir.write("empty.json", "  \n")), Contains("file is empty"));
  REQUIRE_THROWS_WITH(read_json_file(dir.path()), Contains("not a regular file"));
}

TEST_CASE("typed accessors check type, range and presence with the key path", "[config]") {
  const auto doc = parse_json_text(
      R"({"n": 2.5, "i": 4096, "neg": -1, "frac": 1.5, "s": "x", "o": {"inner": "bad"},
          "f": 3.0, "b": "yes"})",
      "t.json");
  JsonObjectReader r(doc, "t.json");
  REQUIRE(r.number("n") == 2.5);
  REQUIRE(r.positive_integer("i") == 4096);
  REQUIRE(r.positive_integer("f") == 3);
  REQUIRE_THROWS_WITH(r.positive_integer("n"), Contains("field \"n\"") && Contains("integer"));
  REQUIRE_THROWS_WITH(r.positive_number("neg"), Contains("positive"));
  REQUIRE_THROWS_WITH(r.fraction("frac"), Contains("(0, 1]"));
  REQUIRE_THROWS_WITH(r.number("s"), Contains("expected a number, got string"));
  REQUIRE_THROWS_WITH(r.string("missing"), Contains("field \"missing\": required but missing"));
  REQUIRE_THROWS_WITH(r.optional_boolean("b"), Contains("true or false"));
  JsonObjectReader inner = r.object("o");
  REQUIRE_THROWS_WITH(inner.number("inner"), Contains("field \"o.inner\""));
  REQUIRE_FALSE(r.optional_number("absent").has_value());
}

TEST_CASE("unknown keys are refused, listing the known ones", "[config]") {
  const auto doc = parse_json_text(R"({"alpha": 1, "betta": 2})", "u.json");
  JsonObjectReader r(doc, "u.json");
  (void)r.number("alpha");
  (void)r.optional_number("beta");
  REQUIRE_THROWS_WITH(r.reject_unknown_keys(),
                      Contains("field \"betta\": unknown key") && Contains("alpha, beta"));
  r.ignore("betta");
  REQUIRE_NOTHROW(r.reject_unknown_keys());
}

TEST_CASE("huge integers are refused instead of overflowing", "[config]") {
  const auto doc = parse_json_text(R"({"big": 1e300, "huge": 18446744073709551615})", "h.json");
  JsonObjectReader r(doc, "h.json");
  REQUIRE_THROWS_WITH(r.positive_integer("big"), Contains("too large"));
  REQUIRE_THROWS_WITH(r.positive_integer("huge"), Contains("too large"));
}

namespace {

std::string nested(std::size_t levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

}  // namespace

TEST_CASE("nesting is bounded: kMaxJsonDepth levels parse, one more is refused at its bracket",
          "[config]") {
  const std::size_t limit = kMaxJsonDepth;
  CHECK_NOTHROW(parse_json_text(nested(limit), "ok.json"));
  // The bracket one level too deep is the 129th on line 2.
  REQUIRE_THROWS_WITH(parse_json_text("\n" + nested(limit + 1), "deep.json"),
                      Contains("deep.json: JSON nested deeper than 128 levels at line 2, column " +
                               std::to_string(limit + 1)));
  // Objects count as arrays do, and brackets inside strings do not count.
  std::string objects = "{\"s\": \"[[[[\", \"a\": ";
  for (std::size_t i = 1; i < limit; ++i)
    objects += "{\"a\": ";
  objects += "1" + std::string(limit, '}');
  CHECK_NOTHROW(parse_json_text(objects, "ok.json"));
  // 100,000 levels: refused at once, no crash (copying or printing it would recurse).
  REQUIRE_THROWS_AS(parse_json_text(nested(100000), "deep.json"), InputError);
}

TEST_CASE("parse_json_if_json: bare words are not JSON, but deep or repeated-key JSON is an error",
          "[config]") {
  CHECK_FALSE(parse_json_if_json("vllm", "--set").has_value());
  CHECK_FALSE(parse_json_if_json("", "--set").has_value());
  CHECK_FALSE(parse_json_if_json("1e999", "--set").has_value());
  CHECK(parse_json_if_json("[1, 2]", "--set")->size() == 2);
  REQUIRE_THROWS_WITH(parse_json_if_json(nested(100000), "--set"),
                      Contains("--set: JSON nested deeper than 128 levels"));
  REQUIRE_THROWS_WITH(parse_json_if_json(R"({"a": 1, "a": 2})", "--set"),
                      Contains("\"a\" appears twice"));
}

TEST_CASE("describe_json prints at most 40 characters of any value, however large or deep",
          "[config]") {
  CHECK(describe_json(nlohmann::json(5)) == "number 5");
  CHECK(describe_json(nlohmann::json::parse("[1, [2, 3], {\"k\": \"v\"}]")) ==
        "array [1,[2,3],{\"k\":\"v\"}]");
  // The same text a full dump would start with.
  const auto wide = nlohmann::json::parse(
      "{\"alpha\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], \"beta\": \"x\"}");
  CHECK(json_excerpt(wide) == wide.dump().substr(0, 37) + "...");
  CHECK(json_excerpt(nlohmann::json(std::string(1 << 20, 'x'))) ==
        "\"" + std::string(36, 'x') + "...");
  // Built by hand, deeper than any parsed document may be: still 40 characters.
  nlohmann::json deep = 1;
  for (int i = 0; i < 1000; ++i)
    deep = nlohmann::json::array({std::move(deep)});
  CHECK(json_excerpt(deep) == std::string(37, '[') + "...");
}

TEST_CASE("rates and times that become nanoseconds are bounded, naming the field", "[config]") {
  const auto doc = nlohmann::json::parse(
      R"({"slow": 1e-12, "fast": 4.5e11, "long_s": 1e300, "short_s": 0.5, "neg_s": -1})");
  JsonObjectReader r(doc, "hw.json");
  CHECK(r.rate("fast", kMinBandwidthBytesPerS, "B/s") == 4.5e11);
  REQUIRE_THROWS_WITH(r.rate("slow", kMinBandwidthBytesPerS, "B/s"),
                      Contains("hw.json: field \"slow\": expected at least 1e+06 B/s"));
  CHECK(*r.optional_seconds("short_s", kMaxStepCostS) == 0.5);
  REQUIRE_THROWS_WITH(r.optional_seconds("long_s", kMaxStepCostS),
                      Contains("field \"long_s\": expected a time in [0, 3600] s"));
  REQUIRE_THROWS_WITH(r.optional_seconds("neg_s", kMaxStepCostS), Contains("field \"neg_s\""));
  CHECK_FALSE(r.optional_rate("absent", kMinBandwidthBytesPerS, "B/s").has_value());
}
