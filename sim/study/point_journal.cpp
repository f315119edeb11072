#include "sim/study/point_journal.h"

#include <cstdio>
#include <sstream>
#include <string_view>
#include <vector>

#include "sim/app/app.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kJournal = "journal.jsonl";
// 1: no digests (servesim before the journal moved beside the output); 2: a digest per line.
constexpr std::int64_t kVersion = 2;

std::string header_line(const nlohmann::json& identity) {
  return nlohmann::json{{"servesim_journal", kVersion}, {"study", identity}}.dump();
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

// Whether `line` is JSON cut short: the parser ran out of input before the document ended
// (what a kill in the middle of a write leaves), as opposed to a byte that is wrong.
class EndsEarly final : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit EndsEarly(std::size_t size) : size_(size) {}
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    cut_ = position >= size_;
    return false;
  }
  bool cut() const { return cut_; }

 private:
  std::size_t size_;
  bool cut_ = false;
};

bool cut_short(std::string_view line) {
  EndsEarly handler(line.size());
  nlohmann::json::sax_parse(line.begin(), line.end(), &handler,
                            nlohmann::json::input_format_t::json);
  return handler.cut();
}

// One line of a journal, parsed strictly; errors name the file and the line
// ("OUT/journal.jsonl:3: ...") and the column within it.
nlohmann::json parse_line(std::string_view line, const std::string& source) {
  try {
    return parse_json_text(line, source);
  } catch (const InputError& error) {
    std::string message = error.what();
    const std::string one_line = "at line 1, column ";
    if (const auto at = message.find(one_line); at != std::string::npos) {
      message.replace(at, one_line.size(), "at column ");
    }
    throw InputError("", message);
  }
}

// What a journal file holds.
struct JournalContents {
  nlohmann::json identity;
  std::map<std::string, nlohmann::json> done;
  // The length of the file up to its last whole line, and whether a line follows it (cut
  // short, or whole but for its newline: `last_kept`).
  std::uintmax_t whole_bytes = 0;
  bool trailing = false, last_kept = false;
};

std::optional<JournalContents> read_journal(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (!in || in.bad()) throw InputError(path.string(), "cannot read the study's journal");
  const std::string text = buffer.str();
  const std::string name = path.string();
  JournalContents contents;
  std::int64_t version = 0;
  std::size_t begin = 0;
  for (std::size_t number = 1; begin < text.size(); ++number) {
    const std::size_t newline = text.find('\n', begin);
    const bool whole = newline != std::string::npos;
    const std::string_view line(text.data() + begin, (whole ? newline : text.size()) - begin);
    begin = whole ? newline + 1 : text.size();
    if (whole) contents.whole_bytes = begin;
    contents.trailing = !whole;
    const std::string source = name + ":" + std::to_string(number);
    if (number == 1) {
      if (cut_short(line)) {
        throw InputError(source,
                         "the journal's header is cut short, so no point was recorded: run the "
                         "study again without --resume");
      }
      const nlohmann::json header = parse_line(line, source);
      JsonObjectReader reader(header, source);
      version = reader.positive_integer("servesim_journal");
      if (version > kVersion) {
        reader.fail("servesim_journal", "version " + std::to_string(version) +
                                            " is newer than this servesim reads (at most " +
                                            std::to_string(kVersion) + ")");
      }
      const nlohmann::json* study = reader.optional_raw("study");
      if (study == nullptr || !study->is_object()) {
        reader.fail("study", "expected the study's command and arguments (an object)");
      }
      reader.reject_unknown_keys();
      contents.identity = *study;
      continue;
    }
    // A line cut short by an interruption is dropped: that point runs again. (Journals of
    // servesim before version 2 may hold such a line before others.)
    if (line.empty() || cut_short(line)) continue;
    const nlohmann::json entry = parse_line(line, source);
    JsonObjectReader reader(entry, source);
    const std::string key = reader.string("key");
    const nlohmann::json* result = reader.optional_raw("result");
    if (result == nullptr) reader.fail("result", "missing (expected the point's result)");
    if (!result->is_object()) reader.fail("result", "expected an object");
    const std::optional<std::string> sum =
        version >= 2 ? reader.string("digest") : reader.optional_string("digest");
    reader.reject_unknown_keys();
    if (sum && *sum != digest(result->dump())) {
      reader.fail("result",
                  "does not match the line's digest: the journal is corrupted (delete it to run "
                  "the study again without --resume)");
    }
    contents.done.emplace(key, *result);
    if (!whole) contents.last_kept = true;
  }
  if (version == 0) return std::nullopt;  // an empty file
  return contents;
}

// The journal of `out_dir`: beside it, else where servesim kept it before (in it).
std::optional<std::pair<fs::path, JournalContents>> find_journal(const fs::path& out_dir) {
  for (const fs::path& path : {PointJournal::location(out_dir) / kJournal, out_dir / kJournal}) {
    if (auto contents = read_journal(path)) return std::make_pair(path, std::move(*contents));
  }
  return std::nullopt;
}

[[noreturn]] void no_journal(const fs::path& out_dir) {
  throw InputError(out_dir.string(), "holds no study journal to resume (--resume): none in " +
                                         (PointJournal::location(out_dir) / kJournal).string());
}

}  // namespace

PointJournal::PointJournal(fs::path path, std::map<std::string, nlohmann::json> done, bool writes)
    : path_(std::move(path)), done_(std::move(done)), writes_(writes) {}

PointJournal::PointJournal(PointJournal&& other) noexcept
    : path_(std::move(other.path_)),
      done_(std::move(other.done_)),
      writes_(other.writes_),
      pending_header_(std::move(other.pending_header_)),
      created_(other.created_),
      in_output_(other.in_output_),
      out_(std::move(other.out_)) {
  other.writes_ = false;
  other.created_ = false;
}

PointJournal::~PointJournal() {
  if (created_) remove_files();
}

fs::path PointJournal::location(const fs::path& out_dir) {
  const fs::path target = output_folder(out_dir);  // absolute, checked
  // Named as the user named the folder ("runs/.sweep.journal"), where that names it.
  fs::path shown = out_dir.lexically_normal();
  if (!shown.has_filename()) shown = shown.parent_path();
  const std::string folder = "." + target.filename().string() + ".journal";
  if (shown.filename() == target.filename()) return shown.parent_path() / folder;
  return target.parent_path() / folder;
}

void PointJournal::open_for_appending() {
  if (out_.is_open()) return;
  if (pending_header_) {
    // A new study: its journal begins with its header, in a folder of its own beside the
    // output (which stays as it was until the final files replace it).
    std::error_code ec;
    fs::create_directories(path_.parent_path(), ec);
    std::ofstream header(path_, std::ios::binary | std::ios::trunc);
    header << *pending_header_ << '\n';
    header.close();
    if (!header) throw InputError(path_.string(), "cannot write the study's journal");
    created_ = true;
    pending_header_.reset();
  }
  out_.open(path_, std::ios::binary | std::ios::app);
  if (!out_) throw InputError(path_.string(), "cannot open the study's journal for writing");
}

PointJournal PointJournal::start(const fs::path& out_dir, const nlohmann::json& identity,
                                 bool writes) {
  PointJournal journal(location(out_dir) / kJournal, {}, writes);
  journal.pending_header_ = header_line(identity);
  return journal;
}

nlohmann::json PointJournal::identity_in(const fs::path& out_dir) {
  const auto found = find_journal(out_dir);
  if (!found) no_journal(out_dir);
  return found->second.identity;
}

PointJournal PointJournal::resume(const fs::path& out_dir, const nlohmann::json& identity,
                                  bool writes) {
  auto found = find_journal(out_dir);
  if (!found) no_journal(out_dir);
  auto& [path, contents] = *found;
  if (contents.identity != identity) {
    throw InputError(out_dir.string(),
                     "holds the journal of another study (" + contents.identity.dump() +
                         "); refusing to resume it with different arguments (--resume)");
  }
  if (writes && contents.trailing) {
    // Appends start on a line of their own: after a whole last line its newline, else in
    // place of the line cut short.
    std::error_code ec;
    if (contents.last_kept) {
      std::ofstream(path, std::ios::binary | std::ios::app) << '\n';
    } else {
      fs::resize_file(path, contents.whole_bytes, ec);
      if (ec) throw InputError(path.string(), "cannot write the study's journal: " + ec.message());
    }
  }
  PointJournal journal(path, std::move(contents.done), writes);
  journal.in_output_ = path == out_dir / kJournal;
  return journal;
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
  out_ << nlohmann::json{{"key", key}, {"result", result}, {"digest", digest(result.dump())}}.dump()
       << '\n';
  out_.flush();
  if (!out_) throw InputError(path_.string(), "writing the study's journal failed");
}

std::size_t PointJournal::size() const {
  const std::lock_guard lock(mutex_);
  return done_.size();
}

void PointJournal::finish() {
  const std::lock_guard lock(mutex_);
  if (!writes_) return;
  remove_files();
  created_ = false;
}

void PointJournal::remove_files() {
  out_.close();
  std::error_code ec;
  const fs::path folder = path_.parent_path();
  if (!fs::remove(path_, ec) || !in_output_) {
    fs::remove(folder, ec);  // only when empty
    return;
  }
  // A journal resumed from the output folder, which the study did not replace (it wrote no
  // files): its summary.json saying the study is unfinished goes with it.
  const fs::path stub = folder / "summary.json";
  std::ifstream in(stub, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  in.close();
  const auto summary = nlohmann::json::parse(text.str(), nullptr, false);
  if (summary.is_object() && summary.size() == 1 && summary.contains("incomplete"))
    fs::remove(stub, ec);
  fs::remove(folder, ec);  // only when empty
}

}  // namespace servesim
