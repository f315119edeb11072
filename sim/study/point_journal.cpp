#include "sim/study/point_journal.h"

#include <cstdio>
#include <sstream>

#include "sim/core/error.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kJournal = "journal.jsonl";

std::string header_line(const nlohmann::json& identity) {
  return nlohmann::json{{"servesim_journal", 1}, {"study", identity}}.dump();
}

// The header's identity, or nothing when the file is not a journal.
std::optional<nlohmann::json> read_identity(std::istream& in) {
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto header = nlohmann::json::parse(line, nullptr, false);
  if (header.is_discarded() || !header.is_object() || !header.contains("servesim_journal") ||
      !header.contains("study")) {
    return std::nullopt;
  }
  return header["study"];
}

// 64-bit FNV-1a: the same digest on every build and machine.
std::string digest(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

}  // namespace

PointJournal::PointJournal(fs::path path, std::map<std::string, nlohmann::json> done, bool writes)
    : path_(std::move(path)), done_(std::move(done)), writes_(writes) {}

PointJournal::PointJournal(PointJournal&& other) noexcept
    : path_(std::move(other.path_)),
      done_(std::move(other.done_)),
      writes_(other.writes_),
      pending_header_(std::move(other.pending_header_)),
      out_(std::move(other.out_)) {}

void PointJournal::open_for_appending() {
  if (out_.is_open()) return;
  if (pending_header_) {
    // A new study: the folder is emptied (start() checked that it may be) and the journal
    // begins with its header, beside a summary.json saying the study is unfinished, which
    // also marks the folder as servesim's (the final files replace it).
    const fs::path dir = path_.parent_path();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      fs::remove_all(entry.path(), ec);
    fs::create_directories(dir, ec);
    std::ofstream stub(dir / "summary.json", std::ios::binary | std::ios::trunc);
    stub << nlohmann::json{{"incomplete",
                            "an interrupted study: its finished points are in journal.jsonl; "
                            "run the same command with --resume " +
                                dir.string() + " to finish it"}}
                .dump(2)
         << '\n';
    stub.close();
    std::ofstream header(path_, std::ios::binary | std::ios::trunc);
    header << *pending_header_ << '\n';
    header.close();
    if (!stub || !header) throw InputError(dir.string(), "cannot write the study's journal");
    pending_header_.reset();
  }
  out_.open(path_, std::ios::binary | std::ios::app);
  if (!out_) throw InputError(path_.string(), "cannot open the study's journal for writing");
}

PointJournal PointJournal::start(const fs::path& out_dir, const nlohmann::json& identity,
                                 bool writes) {
  std::error_code ec;
  if (out_dir.empty()) throw InputError("--out", "expected a folder path, got an empty string");
  if (writes) {
    if (fs::exists(out_dir, ec)) {
      if (!fs::is_directory(out_dir, ec)) {
        throw InputError(out_dir.string(), "exists and is not a directory (--out)");
      }
      if (!fs::is_empty(out_dir, ec) && !fs::exists(out_dir / "summary.json", ec) &&
          !fs::exists(out_dir / kJournal, ec)) {
        throw InputError(out_dir.string(),
                         "is a non-empty directory that holds no servesim run; "
                         "refusing to replace it (--out)");
      }
    }
  }
  PointJournal journal(out_dir / kJournal, {}, writes);
  journal.pending_header_ = header_line(identity);
  return journal;
}

nlohmann::json PointJournal::identity_in(const fs::path& out_dir) {
  std::ifstream in(out_dir / kJournal, std::ios::binary);
  const auto identity = in ? read_identity(in) : std::nullopt;
  if (!identity) {
    throw InputError(out_dir.string(),
                     "holds no study journal (journal.jsonl) to resume (--resume)");
  }
  return *identity;
}

PointJournal PointJournal::resume(const fs::path& out_dir, const nlohmann::json& identity,
                                  bool writes) {
  std::ifstream in(out_dir / kJournal, std::ios::binary);
  const auto found = in ? read_identity(in) : std::nullopt;
  if (!found) {
    throw InputError(out_dir.string(),
                     "holds no study journal (journal.jsonl) to resume (--resume)");
  }
  if (*found != identity) {
    throw InputError(out_dir.string(),
                     "holds the journal of another study (" + found->dump() +
                         "); refusing to resume it with different arguments (--resume)");
  }
  std::map<std::string, nlohmann::json> done;
  std::string line;
  while (std::getline(in, line)) {
    const auto entry = nlohmann::json::parse(line, nullptr, false);
    // A line cut short by an interruption (the last one) is dropped: that point runs again.
    // So is a line that is not an entry (a key that is not a string: written by no servesim).
    if (entry.is_discarded() || !entry.is_object() || !entry.contains("key") ||
        !entry["key"].is_string() || !entry.contains("result")) {
      continue;
    }
    done.emplace(entry["key"].get<std::string>(), entry["result"]);
  }
  in.close();
  if (writes) {
    // Appends start on a line of their own after a line cut short.
    std::ifstream tail(out_dir / kJournal, std::ios::binary | std::ios::ate);
    bool ends_in_newline = true;
    if (tail.tellg() > 0) {
      tail.seekg(-1, std::ios::end);
      ends_in_newline = tail.get() == '\n';
    }
    if (!ends_in_newline)
      std::ofstream(out_dir / kJournal, std::ios::binary | std::ios::app) << '\n';
  }
  return PointJournal(out_dir / kJournal, std::move(done), writes);
}

std::string PointJournal::key(const std::string& kind, const nlohmann::json& config) {
  return kind + ":" + digest(config.dump());
}

std::optional<nlohmann::json> PointJournal::find(const std::string& key) const {
  const std::lock_guard lock(mutex_);
  const auto it = done_.find(key);
  if (it == done_.end()) return std::nullopt;
  return it->second;
}

void PointJournal::record(const std::string& key, const nlohmann::json& result) {
  const std::lock_guard lock(mutex_);
  if (!done_.emplace(key, result).second || !writes_) return;
  open_for_appending();
  out_ << nlohmann::json{{"key", key}, {"result", result}}.dump() << '\n';
  out_.flush();
}

std::size_t PointJournal::size() const {
  const std::lock_guard lock(mutex_);
  return done_.size();
}

void PointJournal::discard() {
  const std::lock_guard lock(mutex_);
  if (!writes_ || pending_header_) return;
  out_.close();
  std::error_code ec;
  fs::remove(path_, ec);
  fs::remove(path_.parent_path() / "summary.json", ec);
  if (fs::is_empty(path_.parent_path(), ec)) fs::remove(path_.parent_path(), ec);
}

}  // namespace servesim
