#include "sim/study/capacity_plots.h"

#include <cmath>

#include "sim/metrics/csv_format.h"
#include "sim/metrics/output_file.h"

namespace servesim {

std::optional<Figure> write_capacity_figure(const std::filesystem::path& dir,
                                            const std::vector<CapacityPlotPoint>& points,
                                            const std::string& x_label, const std::string& title) {
  std::string rows;
  for (const auto& point : points) {
    if (!std::isfinite(point.worst_ratio) || point.worst_ratio <= 0 || !std::isfinite(point.x)) {
      continue;
    }
    rows += format_9_digits(point.x) + ' ' + format_9_digits(point.worst_ratio) + ' ' +
            (point.met ? "1" : "0") + '\n';
  }
  if (rows.empty()) return std::nullopt;
  const auto data = dir / "capacity.dat";
  auto out = open_output_file(data);
  out << "# x worst_slo_ratio met\n" << rows;
  close_output_file(out, data);

  const std::string body =
      "set title " + gnuplot_quote(title) + "\nset grid\nset logscale y\nset xlabel " +
      gnuplot_quote(x_label) +
      "\nset ylabel \"worst SLO term: measured / limit\"\n"
      "set key top left opaque box\nset offsets graph 0.05, graph 0.05, 0, 0\n"
      "plot 1 with lines dt 2 lw 2 lc rgb \"#555555\" title \"SLO limit\", \\\n"
      "     \"capacity.dat\" using 1:($3 == 1 ? $2 : 1/0) with points pt 7 ps 1.6 "
      "lc rgb \"#0072B2\" title \"meets the SLO\", \\\n"
      "     \"capacity.dat\" using 1:($3 == 0 ? $2 : 1/0) with points pt 6 ps 1.6 "
      "lc rgb \"#D55E00\" title \"misses it (or is unstable)\"\n";
  Figure figure{"capacity", body, 1000, 620};
  write_figure_script(dir, figure);
  return figure;
}

}  // namespace servesim
