#include <string>
#include <vector>

#include "sim/cli/capacity_layouts.h"
#include "sim/cli/capacity_study.h"
#include "sim/study/summary_columns.h"

namespace servesim::cli {

void print_layouts_report(std::ostream& out, const LayoutReport& report) {
  std::vector<std::string> header{"deployment", "replicas", "GPUs"};
  header.insert(header.end(), kPointColumns.begin(), kPointColumns.end());
  Table points_table(header, {0, header.size() - 1});
  for (const SearchedPoint& p : report.points) {
    std::vector<std::string> cells{p.label, p.counts, std::to_string(p.gpus)};
    add_point_cells(cells, *p.summary, *p.verdict);
    points_table.add_row(cells);
  }
  if (!report.points.empty()) points_table.print(out);

  Table answer_table({"deployment", "replicas", "GPUs", "$/hour", "$/M tokens", "TTFT p99 ms",
                      "TPOT p99 ms", "tok/s/GPU", "tok/s/user", "note"},
                     {0, 9});
  for (const LayoutDeployment& d : report.deployments) {
    if (!d.summary) {
      answer_table.add_row({d.label, "-", "-", "-", "-", "-", "-", "-", "-", d.note});
      continue;
    }
    answer_table.add_row({d.label, d.counts, std::to_string(d.gpus),
                          d.prices ? format_fixed(d.prices->usd_per_hour, 2) : "-",
                          d.prices ? format_fixed(d.prices->usd_per_million_tokens, 3) : "-",
                          format_fixed(summary_value(*d.summary, "ttft_s.p99") * 1e3, 1),
                          format_fixed(summary_value(*d.summary, "tpot_s.p99") * 1e3, 2),
                          format_fixed(d.output_per_gpu, 1), format_fixed(d.output_per_user, 1),
                          d.note});
  }
  out << "\nFewest replicas meeting the SLO at " << rate_text(report.rate_per_s)
      << " req/s (aggregated, and per role of each prefill/decode layout):\n";
  answer_table.print(out);

  const std::array<std::string, 2> kinds{"aggregated", "disaggregated"};
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    out << "Best " << kinds[k] << " (fewest " << (report.by_cost ? "$/M tokens" : "GPUs") << "): ";
    const LayoutDeployment* best = report.best[k];
    if (!best) {
      out << (report.searched_any[k] ? "none meets the SLO\n"
                                     : "none searched (the notes above say why)\n");
      continue;
    }
    out << best->label << ", " << best->counts << (k == 0 ? " replica(s), " : ", ") << best->gpus
        << " GPUs";
    if (best->prices) {
      out << ", $" << format_fixed(best->prices->usd_per_million_tokens, 3) << "/M tokens";
    }
    out << '\n';
  }
  if (!report.front.points.empty()) {
    out << "\nPareto front of the points meeting the SLO: output tokens/s per GPU at the target "
           "rate against per user (1 / mean TPOT):\n";
    Table front({"deployment", "replicas", "GPUs", "tok/s/GPU", "tok/s/user", "TTFT p99 ms",
                 "TPOT p99 ms", "config"},
                {0, 7});
    for (const LayoutFrontPoint& f : report.front.points) {
      const SearchedPoint& e = *f.point;
      front.add_row({e.label, e.counts, std::to_string(e.gpus), format_fixed(f.output_per_gpu, 1),
                     format_fixed(f.output_per_user, 1),
                     format_fixed(summary_value(*e.summary, "ttft_s.p99") * 1e3, 1),
                     format_fixed(summary_value(*e.summary, "tpot_s.p99") * 1e3, 2),
                     f.config_file.empty() ? "-" : f.config_file});
    }
    front.print(out);
    if (!report.wrote_configs)
      out << "(--out writes a runnable configuration of each front point)\n";
  }
}

}  // namespace servesim::cli
