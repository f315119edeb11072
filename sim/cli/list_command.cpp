#include "sim/app/policies.h"
#include "sim/cli/format.h"
#include "sim/cli/options.h"
#include "sim/config/catalog.h"
#include "sim/model/model_size.h"

namespace servesim::cli {

int run_list(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  const auto vm =
      parse_options(context, options, "servesim list",
                    "Lists the shipped models, hardware profiles and workload presets, and every\n"
                    "registered scheduler, KV allocator and router.");
  if (!vm) return 0;
  std::ostream& out = context.out;

  const Catalog models(context.data_root / "models", "model", "--model");
  out << "Models (--model NAME, or a path to a Hugging Face config.json):\n";
  Table model_table({"name", "family", "params", "active", "layers", "hidden", "heads/kv",
                     "KV/token (16-bit)", "max len"},
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
  model_table.print(out);

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
  hw_table.print(out);

  const Catalog workloads(context.data_root / "workloads", "workload preset", "--workload");
  out << "\nWorkload presets (--workload NAME, or a path to a workload JSON):\n";
  for (const auto& name : workloads.names())
    out << "  " << name << '\n';

  const auto print_registry = [&](const auto& registry, const char* flag) {
    out << "\n" << registry.kind() << "s (" << flag << "):\n";
    Table table({"name", "description"}, {1});
    for (const auto& entry : registry.entries())
      table.add_row({entry.name, entry.description});
    table.print(out);
  };
  print_registry(scheduler_registry(), "--scheduler");
  print_registry(allocator_registry(), "--allocator");
  print_registry(router_registry(), "--router");
  return 0;
}

}  // namespace servesim::cli
