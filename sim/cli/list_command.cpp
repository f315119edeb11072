#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/app/app.h"
#include "sim/cli/format.h"
#include "sim/cli/options.h"
#include "sim/config/catalog.h"
#include "sim/engine/engine_profile.h"
#include "sim/model/model_size.h"

namespace servesim::cli {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items)
    text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace

// Every table of the listing fits a terminal of this many columns.
constexpr std::size_t kListWidth = 100;

namespace {

void print_model_list(std::ostream& out, const CommandContext& context) {
  const Catalog models(context.data_root / "models", "model", "--model");
  out << "Models (--model NAME, a Hugging Face id, or a path to a config.json;\n"
         "heads: attention/KV; KV/token: KV bytes per token in 16 bits):\n";
  Table model_table(
      {"name", "family", "params", "active", "layers", "hidden", "heads", "KV/token", "max len"},
      {1});
  for (const auto& name : models.names()) {
    const ModelSpec m = load_model(name, context);
    const ParameterCounts p = count_parameters(m);
    model_table.add_row({name, std::string(family_name(m.family)),
                         format_si(static_cast<double>(p.total), ""),
                         format_si(static_cast<double>(p.active), ""), std::to_string(m.num_layers),
                         std::to_string(m.hidden_size),
                         std::to_string(m.num_heads) + "/" + std::to_string(m.num_kv_heads),
                         format_bytes(kv_bytes_per_token(m, DType::BF16)),
                         format_count(static_cast<double>(m.max_position_embeddings))});
  }
  model_table.set_max_width(kListWidth);
  model_table.print(out);
}

void print_hardware_list(std::ostream& out, const CommandContext& context) {
  const Catalog hardware(context.data_root / "hw_profiles", "hardware profile", "--hw");
  out << "\nHardware profiles (--hw NAME, or a path to a profile JSON):\n";
  Table hw_table({"name", "device", "bf16 dense", "memory", "bandwidth", "GPU link/dir"}, {1});
  for (const auto& name : hardware.names()) {
    const HardwareProfile h = load_hardware(name, context);
    hw_table.add_row({name, h.description, format_si(h.peak_flops(DType::BF16), "FLOP/s"),
                      format_bytes(h.memory_capacity_bytes),
                      format_si(h.memory_bandwidth_bytes_per_s, "B/s"),
                      format_si(h.gpu_link_bandwidth_bytes_per_s, "B/s")});
  }
  hw_table.set_max_width(kListWidth);
  hw_table.print(out);
}

void print_engine_list(std::ostream& out, const CommandContext& context) {
  const Catalog engines(context.data_root / "engines", "engine", "--engine");
  out << "\nEngines (--engine NAME, or a path to an engine JSON):\n";
  Table engine_table({"name", "scheduler", "chunked", "prefix cache", "host overlap", "CUDA graphs",
                      "description"},
                     {1, 6});
  for (const auto& name : engines.names()) {
    const EngineProfile e = load_engine_file(engines.resolve(name));
    const auto& graphs = e.costs.cuda_graph_capture_sizes;
    engine_table.add_row({name, e.scheduling.scheduler, e.scheduling.chunked_prefill ? "yes" : "no",
                          e.scheduling.enable_prefix_caching ? "yes" : "no",
                          e.costs.host.overlaps_device ? "yes" : "no",
                          graphs.empty() ? "none" : "up to " + std::to_string(graphs.back()),
                          e.description});
  }
  engine_table.set_max_width(kListWidth);
  engine_table.print(out);
}

void print_workload_list(std::ostream& out, const CommandContext& context) {
  const Catalog workloads(context.data_root / "workloads", "workload preset", "--workload");
  out << "\nWorkload presets (--workload NAME, or a path to a workload JSON):\n";
  for (const auto& name : workloads.names())
    out << "  " << name << '\n';
}

// Each registry, then the parameters its policies read from their config section.
// `extra` adds a column (its header, then one cell per entry by name).
using RegistryColumn = std::pair<std::string, std::map<std::string, std::string>>;
template <class Registry>
void print_registry(std::ostream& out, const Registry& registry, const std::string& title,
                    const std::string& section, const RegistryColumn& extra = {}) {
  out << "\n" << title << ":\n";
  std::vector<std::string> header{"name", "description"};
  if (!extra.first.empty()) header.insert(header.begin() + 1, extra.first);
  Table table(header, {1, 2});
  Table parameters({"policy", "key", "default", "meaning"}, {1, 2, 3});
  bool any_parameter = false;
  for (const auto& entry : registry.entries()) {
    std::vector<std::string> row{entry.name, entry.description};
    if (!extra.first.empty()) row.insert(row.begin() + 1, extra.second.at(entry.name));
    table.add_row(row);
    for (const auto& p : entry.parameters) {
      std::string meaning = p.help;
      if (p.type == ParameterType::Choice) meaning += " (" + join(p.choices) + ")";
      if (p.type == ParameterType::Policy) {
        meaning += " (a " + p.policies->kind + ": " + p.policies->names() + ")";
      }
      parameters.add_row(
          {entry.name, section + "." + p.name, format_parameter_value(p.default_value), meaning});
      any_parameter = true;
    }
  }
  table.set_max_width(kListWidth);
  table.print(out);
  if (any_parameter) {
    out << '\n';
    parameters.set_max_width(kListWidth);
    parameters.print(out);
  }
}

}  // namespace

int run_list(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  const auto vm = parse_options(
      context, options, "servesim list",
      "Lists the shipped models, hardware profiles, engines and workload presets, and every\n"
      "registered scheduler, KV allocator, reservation and placement policy, cost\n"
      "model and router, with the parameters each reads and their defaults.");
  if (!vm) return 0;
  std::ostream& out = context.out;
  print_model_list(out, context);
  print_hardware_list(out, context);
  print_engine_list(out, context);
  print_workload_list(out, context);

  RegistryColumn allocators{"allocators", {}};
  for (const auto& [scheduler, accepted] : allocators_by_scheduler())
    allocators.second[scheduler] = join(accepted);
  print_registry(out, scheduler_registry(), "Schedulers (--scheduler, scheduler.name)", "scheduler",
                 allocators);
  print_registry(out, allocator_registry(), "KV allocators (--allocator, allocator.name)",
                 "allocator");
  print_registry(out, reservation_registry(),
                 "Reservation policies of the contiguous allocator (--reservation, "
                 "allocator.reservation)",
                 "allocator");
  print_registry(out, placement_registry(),
                 "Placement policies of the contiguous allocator (--placement, "
                 "allocator.placement)",
                 "allocator");
  print_registry(out, cost_model_registry(), "Cost models (--cost-model, cost_model.name)",
                 "cost_model");
  print_registry(out, router_registry(), "Routers (--router, router)", "router");
  return 0;
}

}  // namespace servesim::cli
