// The study journal: kept beside the output folder (never in it), written only once a point
// finishes, removed when the study is over or fails, and read back with typed errors that
// name the file, the line and the field; a line cut short by a kill is dropped.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/error.h"
#include "sim/study/point_journal.h"
#include "tests/support/test_support.h"

namespace {

namespace fs = std::filesystem;
using servesim::PointJournal;
using servesim::test::read_file;

const nlohmann::json kStudy{{"command", "sweep"}, {"arguments", {"--grid", "rate=1,2"}}};

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The InputError message of resuming `out`, or "" when it resumes.
std::string resume_error(const fs::path& out) {
  try {
    PointJournal::resume(out, kStudy, false);
  } catch (const servesim::InputError& e) {
    return e.what();
  }
  return "";
}

// A journal of two points, as servesim writes it.
std::string two_points(const fs::path& out) {
  {
    PointJournal journal = PointJournal::start(out, kStudy, true);
    journal.record("point:a", {{"ttft_s", {{"p50", 0.125}}}});
    journal.record("point:b", {{"does_not_fit", "too big"}});
    const std::string text = read_file(PointJournal::location(out) / "journal.jsonl");
    journal.finish();
    return text;
  }
}

}  // namespace

TEST_CASE("the journal lives beside the output folder, named from it", "[study][journal]") {
  const servesim::test::ScratchDir scratch("journal_location");
  CHECK(PointJournal::location(scratch.path() / "runs" / "sweep") ==
        scratch.path() / "runs" / ".sweep.journal");
  CHECK(PointJournal::location(scratch.path() / "runs" / "sweep/") ==
        scratch.path() / "runs" / ".sweep.journal");
  CHECK(PointJournal::location(scratch.path() / "a" / ".." / "sweep") ==
        scratch.path() / ".sweep.journal");
}

TEST_CASE("a journal writes nothing before its first point and leaves the output alone",
          "[study][journal]") {
  const servesim::test::ScratchDir scratch("journal_lifecycle");
  const fs::path out = scratch.path() / "out";
  write(out / "summary.json", "{\"previous\": true}\n");
  const fs::path file = PointJournal::location(out) / "journal.jsonl";
  {
    PointJournal journal = PointJournal::start(out, kStudy, true);
    CHECK_FALSE(fs::exists(PointJournal::location(out)));
    journal.record("point:a", {{"x", 1}});
    CHECK(fs::exists(file));
    // The previous output is untouched while the study runs.
    CHECK(read_file(out / "summary.json") == "{\"previous\": true}\n");
    CHECK(std::distance(fs::directory_iterator(out), fs::directory_iterator()) == 1);
  }
  // Not finished (an error unwound the study): a journal this process started goes.
  CHECK_FALSE(fs::exists(PointJournal::location(out)));
  CHECK(read_file(out / "summary.json") == "{\"previous\": true}\n");

  // A resumed journal outlives an error, and goes when the study finishes.
  const std::string text = two_points(out);
  write(file, text);
  {
    PointJournal journal = PointJournal::resume(out, kStudy, true);
    CHECK(journal.size() == 2);
    CHECK(journal.find("point:a")->at("ttft_s").at("p50") == 0.125);
  }
  CHECK(read_file(file) == text);
  PointJournal::resume(out, kStudy, true).finish();
  CHECK_FALSE(fs::exists(PointJournal::location(out)));

  // A study that fails before its first point leaves an earlier journal as it was.
  write(file, text);
  { PointJournal journal = PointJournal::start(out, kStudy, true); }
  CHECK(read_file(file) == text);
}

TEST_CASE("a line cut short is dropped, and appends start in its place", "[study][journal]") {
  const servesim::test::ScratchDir scratch("journal_cut");
  const fs::path out = scratch.path() / "out";
  const fs::path file = PointJournal::location(out) / "journal.jsonl";
  const std::string text = two_points(out);
  const std::string cut = text.substr(0, text.size() - 9);  // the last line loses its end
  write(file, cut);
  {
    PointJournal journal = PointJournal::resume(out, kStudy, true);
    CHECK(journal.size() == 1);
    CHECK(journal.find("point:a"));
    CHECK_FALSE(journal.find("point:b"));
    journal.record("point:b", {{"does_not_fit", "too big"}});
    CHECK(read_file(file) == text);  // the cut line replaced by the whole one
    journal.finish();
  }
  // A whole last line without its newline is kept.
  write(file, text.substr(0, text.size() - 1));
  CHECK(PointJournal::resume(out, kStudy, false).size() == 2);
  // Journals before version 2 could hold a cut line before others (a resume appended after
  // it): dropped too.
  const std::size_t second = text.find('\n') + 1;
  const std::size_t third = text.find('\n', second) + 1;
  write(file, text.substr(0, second) + text.substr(second, 20) + "\n" + text.substr(third));
  CHECK(PointJournal::resume(out, kStudy, false).size() == 1);
}

TEST_CASE("a journal line that is not servesim's is an input error naming file, line, field",
          "[study][journal]") {
  const servesim::test::ScratchDir scratch("journal_typed");
  const fs::path out = scratch.path() / "out";
  const fs::path file = PointJournal::location(out) / "journal.jsonl";
  const std::string text = two_points(out);
  const std::string header = text.substr(0, text.find('\n') + 1);
  const std::string source = file.string() + ":2: ";
  const auto with_line = [&](const std::string& line) {
    write(file, header + line + "\n");
    return resume_error(out);
  };
  CHECK(with_line(R"({"digest":"0","key":5,"result":{}})") ==
        source + "field \"key\": expected a string, got number 5");
  CHECK_THAT(with_line(R"({"digest":"0","key":"point:a","result":[1]})"),
             Catch::StartsWith(source + "field \"result\": expected an object"));
  CHECK_THAT(with_line(R"({"key":"point:a","result":{}})"),
             Catch::StartsWith(source + "field \"digest\""));
  CHECK_THAT(with_line(R"({"digest":"0","key":"point:a","result":{},"extra":1})"),
             Catch::StartsWith(source + "field \"extra\""));
  // A byte that is wrong, not missing: the column.
  CHECK_THAT(with_line(R"({"digest":"0","key":"point:a","result":{]})"),
             Catch::StartsWith(source + "malformed JSON at column 41"));
  // A value changed after it was written (the digest no longer matches).
  std::string corrupted = text;
  corrupted.replace(corrupted.find("0.125"), 5, "0.126");
  write(file, corrupted);
  CHECK_THAT(resume_error(out), Catch::StartsWith(source + "field \"result\": does not match"));
  // The header.
  write(file, R"({"servesim_journal":"2","study":{}})"
              "\n");
  CHECK_THAT(resume_error(out),
             Catch::StartsWith(file.string() + ":1: field \"servesim_journal\""));
  write(file, R"({"servesim_journal":3,"study":{}})"
              "\n");
  CHECK_THAT(resume_error(out), Catch::Contains("newer than this servesim reads"));
  write(file, R"({"servesim_jou)");
  CHECK_THAT(resume_error(out), Catch::Contains(":1: the journal's header is cut short"));
  // Nothing was changed by any refusal.
  CHECK(read_file(file) == R"({"servesim_jou)");
}

TEST_CASE("a journal in the output folder, where servesim kept it before, still resumes",
          "[study][journal]") {
  const servesim::test::ScratchDir scratch("journal_legacy");
  const fs::path out = scratch.path() / "out";
  write(out / "summary.json", R"({"incomplete": "an interrupted study"})");
  write(out / "journal.jsonl",
        R"({"servesim_journal":1,"study":{"arguments":["--grid","rate=1,2"],"command":"sweep"}})"
        "\n"
        R"({"key":"point:a","result":{"x":1}})"
        "\n");
  {
    PointJournal journal = PointJournal::resume(out, kStudy, true);
    CHECK(journal.size() == 1);
    journal.record("point:b", {{"x", 2}});
    // A study that ends writing no files takes the old journal and its summary.json away.
    journal.finish();
  }
  CHECK_FALSE(fs::exists(out));
  CHECK_THAT(resume_error(out), Catch::Contains("holds no study journal"));
}
