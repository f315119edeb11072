#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace servesim {

// The points a study has finished, kept as they finish so that an interrupted study resumes
// where it stopped (docs/studies.md, "Interruption"). The journal lives beside the study's
// output folder, never in it (location(): OUT's sibling .OUT.journal/journal.jsonl), so that
// the previous output stays as it was until the final files replace it whole: a header line
// naming the study, then one line per point with its result and the result's digest. Each
// line is written whole and flushed; a line cut short by a kill is dropped on resuming. A
// point is known by its complete configuration, so a resumed study takes a finished point's
// result instead of simulating it again, and its final files are those of an uninterrupted
// run. Thread-safe. Only the writing process (an MPI job's rank 0) is given `writes` = true.
class PointJournal {
 public:
  // Where the journal of a study writing to `out_dir` is kept: the hidden folder
  // .NAME.journal beside it, the same in every process. InputError when `out_dir` may not
  // be written (output_folder).
  static std::filesystem::path location(const std::filesystem::path& out_dir);
  // Starts a journal for the study `identity` (what must match to resume it). Nothing is
  // written until the first point finishes, so that a study refused before that writes
  // nothing; a journal left by an earlier interrupted study is replaced then.
  static PointJournal start(const std::filesystem::path& out_dir, const nlohmann::json& identity,
                            bool writes);
  // Reopens the journal of `out_dir` to continue it: at location(), else in OUT/journal.jsonl
  // (where servesim kept it before). InputError, with nothing changed, when there is none,
  // when it is of a study other than `identity`, or when a line is not what servesim writes
  // (naming the file, the line and the field); a last line cut short is dropped.
  static PointJournal resume(const std::filesystem::path& out_dir, const nlohmann::json& identity,
                             bool writes);
  // The identity a journal of `out_dir` was started with (to rerun its command line), or
  // InputError when there is none.
  static nlohmann::json identity_in(const std::filesystem::path& out_dir);

  PointJournal(PointJournal&& other) noexcept;
  PointJournal& operator=(PointJournal&&) = delete;
  // A journal this process started and did not finish() is removed (a study that fails with
  // an error leaves nothing behind: its inputs may change before it runs again); a resumed
  // one is kept, and so is any journal of a process that is killed.
  ~PointJournal();

  // The key of a point: a digest of its complete configuration and what kind of point it is.
  static std::string key(const std::string& kind, const nlohmann::json& config);
  // A finished point's result, if the journal has it.
  std::optional<nlohmann::json> find(const std::string& key) const;
  // Records a finished point (once: a key already recorded is left alone).
  void record(const std::string& key, const nlohmann::json& result);
  std::size_t size() const;
  // The study is over (its files are published, or it has none to write): removes the
  // journal and its folder.
  void finish();

 private:
  PointJournal(std::filesystem::path path, std::map<std::string, nlohmann::json> done, bool writes);
  std::filesystem::path path_;
  std::map<std::string, nlohmann::json> done_;
  bool writes_ = false;
  std::optional<std::string> pending_header_;  // a started journal before its first point
  bool created_ = false;                       // this process wrote the journal's header
  bool in_output_ = false;                     // resumed from OUT/journal.jsonl
  void open_for_appending();
  void remove_files();
  mutable std::mutex mutex_;
  std::ofstream out_;
};

}  // namespace servesim
