#include "sim/calibration/serving_deployed.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/calibration/serving_fields.h"
#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/metrics/csv_format.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;
using serving_fields::Cell;
using serving_fields::in_quotes;

// The serving command's words, split at white space.
std::vector<std::string> words_of(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> words;
  for (std::string word; in >> word;)
    words.push_back(word);
  return words;
}

// A command's flags: "--name value", "--name=value" or a bare "--name" (value "true"), with
// '_' read as '-' (TensorRT-LLM's --max_num_tokens is --max-num-tokens), "-tp" as "--tp".
std::map<std::string, std::string> flags_of(const std::vector<std::string>& words) {
  std::map<std::string, std::string> flags;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.size() < 2 || word[0] != '-' || (word[1] != '-' && word != "-tp")) continue;
    std::string name = word.substr(word[1] == '-' ? 2 : 1);
    std::string value = "true";
    if (const auto equals = name.find('='); equals != std::string::npos) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
    } else if (i + 1 < words.size() && !words[i + 1].starts_with("-")) {
      value = words[++i];
    }
    std::replace(name.begin(), name.end(), '_', '-');
    flags[name] = value;
  }
  return flags;
}

// The checkpoint the command serves: `vllm serve M`, `trtllm-serve M`, or --model-path /
// --model M (SGLang).
std::optional<std::string> checkpoint_of(const std::vector<std::string>& words,
                                         const std::map<std::string, std::string>& flags) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if ((words[i] == "vllm" && words[i + 1] == "serve" && i + 2 < words.size())) {
      return words[i + 2];
    }
    if (words[i] == "trtllm-serve") return words[i + 1];
  }
  for (const char* flag : {"model-path", "model"}) {
    if (const auto it = flags.find(flag); it != flags.end()) return it->second;
  }
  return std::nullopt;
}

// The GPU a hardware description names ("A single NVIDIA H100 SXM GPU.", "8 x NVIDIA A100 SXM
// 80GB GPUs on a single node.").
std::optional<std::string> hardware_of(const std::string& text) {
  const auto has = [&](const char* part) { return text.find(part) != std::string::npos; };
  if (has("H100")) return has("PCIe") ? "h100-pcie" : "h100-sxm";
  if (has("H200")) return "h200";
  if (has("B200")) return "b200";
  if (has("A100")) return has("40GB") ? "a100-40gb" : "a100-80gb";
  return std::nullopt;
}

// What servesim does not model in a serving command, or nothing.
std::optional<std::string> unmodelled(const std::map<std::string, std::string>& flags) {
  std::vector<std::string> parts;
  if (flags.count("speculative-algorithm") != 0) {
    parts.push_back("speculative decoding (" + flags.at("speculative-algorithm") +
                    " with a draft model)");
  }
  if (const auto it = flags.find("attention-backend"); it != flags.end()) {
    parts.push_back("attention backend " + it->second);
  }
  if (flags.count("enable-torch-compile") != 0) parts.push_back("torch.compile");
  if (flags.count("enable-dp-attention") != 0) parts.push_back("data-parallel attention");
  if (parts.empty()) return std::nullopt;
  std::string text;
  for (const auto& part : parts)
    text += (text.empty() ? "" : ", ") + part;
  return text;
}

// The rows of the file (the header, then the data rows) and the '#' lines skipped before the
// header.
struct ReportRows {
  std::vector<std::vector<std::string>> rows;
  std::size_t comment_lines = 0;
};
ReportRows report_rows(const std::string& text, const std::string& source) {
  ReportRows report;
  std::size_t start = 0;
  while (start < text.size() && text[start] == '#') {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) return report;
    start = end + 1;
    ++report.comment_lines;
  }
  report.rows = parse_csv(std::string_view(text).substr(start), source);
  return report;
}

std::string engine_profile_of(const std::string& engine) {
  // TensorRT-LLM 1.x's trtllm-serve (PyTorch backend) is trtllm-1.1; vLLM V1 and SGLang are
  // the shipped profiles of their names.
  if (engine == "trtllm") return "trtllm-1.1";
  return engine;
}

}  // namespace

bool is_deployment_report_header(std::string_view header_line) {
  return header_line.find("serve_cmd") != std::string_view::npos &&
         header_line.find("n_req") != std::string_view::npos;
}

std::vector<ServingPoint> read_deployment_report(const fs::path& file,
                                                 const ServingPointOptions& options) {
  const std::string source = file.string();
  const ReportRows report = report_rows(read_text_file(file), source);
  const auto& rows = report.rows;
  if (rows.empty()) throw InputError(source, "empty file (no header, no rows)");
  if (rows.size() < 2) {
    throw InputError(source, "no rows after the header: expected a serving command a row");
  }
  std::map<std::string, std::size_t> columns;
  for (std::size_t i = 0; i < rows.front().size(); ++i)
    columns.emplace(rows.front()[i], i);
  std::vector<ServingPoint> points;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& fields = rows[r];
    const std::string row_where = source + ": row " + std::to_string(r);
    const auto cell = [&](const char* column) -> std::optional<Cell> {
      const auto it = columns.find(column);
      if (it == columns.end()) {
        throw InputError(source + ": header, column " + in_quotes(column),
                         "missing: a deployment report has doc, hardware, engine, serve_cmd, "
                         "n_req, in_tok, out_tok and the bench serve means");
      }
      if (it->second >= fields.size() || fields[it->second].empty()) return std::nullopt;
      return Cell{fields[it->second], row_where + ", column " + in_quotes(column)};
    };
    const auto required = [&](const char* column) {
      if (auto c = cell(column)) return *c;
      throw InputError(row_where + ", column " + in_quotes(column), "empty");
    };
    ServingPoint p;
    p.source = source;
    p.row = r;
    p.line = report.comment_lines + r + 1;  // a field holds no line break in these reports
    const Cell command = required("serve_cmd");
    const auto words = words_of(command.text);
    const auto flags = flags_of(words);
    const auto checkpoint = checkpoint_of(words, flags);
    if (!checkpoint) {
      serving_fields::fail(command, "a vllm serve, trtllm-serve or sglang command naming a model");
    }
    p.model_name = *checkpoint;
    p.model = serving_fields::resolve_model(*checkpoint, options.data_root, command.where);
    if (options.hardware) {
      p.hardware = serving_fields::resolve_hardware(*options.hardware, options.data_root, "--hw");
    } else {
      const Cell hardware = required("hardware");
      const auto gpu = hardware_of(hardware.text);
      if (!gpu) serving_fields::fail(hardware, "a description naming an A100, H100, H200 or B200");
      p.hardware = serving_fields::resolve_hardware(*gpu, options.data_root, hardware.where);
    }
    for (const char* flag : {"tp", "tp-size", "tensor-parallel-size"}) {
      if (const auto it = flags.find(flag); it != flags.end()) {
        p.tp = serving_fields::integer_of(Cell{it->second, command.where + " (--" + flag + ")"}, 1);
      }
    }
    p.engine = options.engine ? *options.engine : engine_profile_of(required("engine").text);
    EngineKnobs& k = p.knobs;
    const auto integer_flag = [&](const char* flag) -> std::optional<std::int64_t> {
      const auto it = flags.find(flag);
      if (it == flags.end()) return std::nullopt;
      return serving_fields::integer_of(Cell{it->second, command.where + " (--" + flag + ")"}, 1);
    };
    k.max_num_seqs = integer_flag("max-num-seqs");
    k.max_num_batched_tokens = integer_flag("max-num-batched-tokens");
    if (!k.max_num_batched_tokens) k.max_num_batched_tokens = integer_flag("max-num-tokens");
    k.max_model_len = integer_flag("max-model-len");
    if (!k.max_model_len) k.max_model_len = integer_flag("max-seq-len");
    if (flags.count("enable-expert-parallel") != 0) k.enable_expert_parallel = true;
    if (const auto graphs = integer_flag("cuda-graph-max-bs")) {
      // SGLang's captured batch sizes up to the flag: 1, 2, 4, 8, then steps of 8.
      nlohmann::json sizes = nlohmann::json::array();
      for (std::int64_t size : {1, 2, 4})
        if (size <= *graphs) sizes.push_back(size);
      for (std::int64_t size = 8; size <= *graphs; size += 8)
        sizes.push_back(size);
      p.engine_terms.emplace_back("cuda_graphs.capture_sizes", sizes);
    }
    if (const auto reason = unmodelled(flags)) p.unsupported = *reason;

    // The client: n_req requests of the measured mean lengths, all at once unless max_conc.
    BenchReplay replay;
    const std::int64_t requests = serving_fields::integer_of(required("n_req"), 1);
    const auto mean_tokens = [&](const char* column) {
      const double total = serving_fields::number_of(required(column), 0, true);
      return std::max<std::int64_t>(1, std::llround(total / static_cast<double>(requests)));
    };
    replay.requests.assign(static_cast<std::size_t>(requests),
                           {mean_tokens("in_tok"), mean_tokens("out_tok")});
    replay.request_rate_per_s = std::numeric_limits<double>::infinity();
    if (const auto rate = cell("rate"); rate && rate->text != "inf") {
      replay.request_rate_per_s = serving_fields::number_of(*rate, 0, true);
    }
    if (const auto concurrency = cell("max_conc")) {
      replay.max_concurrency = serving_fields::integer_of(*concurrency, 1);
    }
    p.workload = std::move(replay);
    ServingMetrics& m = p.measured;
    for (const auto& [column, metric] :
         {std::pair{"ttft_mean", ServingMetric::TtftMs},
          std::pair{"tpot_mean", ServingMetric::TpotMs},
          std::pair{"itl_mean", ServingMetric::ItlMs}, std::pair{"e2e_mean", ServingMetric::E2eMs},
          std::pair{"out_tok_s", ServingMetric::OutputTokensPerS}}) {
      if (const auto c = cell(column)) m[metric] = serving_fields::number_of(*c, 0, true);
    }
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace servesim
