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

// The points a study has finished, kept in its output folder as they finish
// (OUT/journal.jsonl: a header line naming the study, then one line per point), so that an
// interrupted study resumes where it stopped (docs/studies.md, "Interruption"). Each line is
// written whole and flushed; a line cut short by a kill is dropped on resuming. A point is
// known by its complete configuration, so a resumed study takes a finished point's result
// instead of simulating it again, and its final files are those of an uninterrupted run.
// Thread-safe. Only the writing process (an MPI job's rank 0) is given `writes` = true.
class PointJournal {
 public:
  // Starts a journal in `out_dir` for the study `identity` (what must match to resume it).
  // Refuses (InputError) a folder that is not empty and holds neither servesim output (a
  // summary.json) nor a journal, touching nothing; otherwise the folder is created, or
  // emptied, when the first point finishes, so that a study refused before that (bad
  // input) writes nothing.
  static PointJournal start(const std::filesystem::path& out_dir, const nlohmann::json& identity,
                            bool writes);
  // Reopens the journal in `out_dir` to continue it. InputError, with nothing changed, when
  // the folder holds no journal or one of a study other than `identity`.
  static PointJournal resume(const std::filesystem::path& out_dir, const nlohmann::json& identity,
                             bool writes);
  // The identity a journal in `out_dir` was started with (to rerun its command line), or
  // InputError when it holds none.
  static nlohmann::json identity_in(const std::filesystem::path& out_dir);

  PointJournal(PointJournal&& other) noexcept;
  PointJournal& operator=(PointJournal&&) = delete;

  // The key of a point: a digest of its complete configuration and what kind of point it is.
  static std::string key(const std::string& kind, const nlohmann::json& config);
  // A finished point's result, if the journal has it.
  std::optional<nlohmann::json> find(const std::string& key) const;
  // Records a finished point (once: a key already recorded is left alone).
  void record(const std::string& key, const nlohmann::json& result);
  std::size_t size() const;
  // Removes what the journal wrote (its file, the unfinished summary.json and the folder
  // when that leaves it empty): for a study that ends writing no files.
  void discard();

 private:
  PointJournal(std::filesystem::path path, std::map<std::string, nlohmann::json> done, bool writes);
  std::filesystem::path path_;
  std::map<std::string, nlohmann::json> done_;
  bool writes_ = false;
  std::optional<std::string> pending_header_;  // a started journal before its first point
  void open_for_appending();
  mutable std::mutex mutex_;
  std::ofstream out_;
};

}  // namespace servesim
