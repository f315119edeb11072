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
