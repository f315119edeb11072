#include <filesystem>
#include <string>

#include "sim/app/app.h"
#include "sim/cli/options.h"
#include "sim/cli/serving_options.h"
#include "sim/study/html_report.h"

namespace servesim::cli {

int run_report(CommandContext& context) {
  po::options_description options("Options", 100, 50);
  options.add_options()("dir", po::value<std::string>()->value_name("DIR")->required(),
                        "output folder of servesim run, sweep, compare or capacity")(
      "output,o", po::value<std::string>()->value_name("FILE"),
      "write the page here (default DIR/report.html)");
  po::positional_options_description positional;
  positional.add("dir", 1);
  const auto vm = parse_options(
      context, options, "servesim report DIR [--output FILE]",
      "Turns an output folder into one self-contained HTML page to share: the command that\n"
      "wrote it and the servesim version, the headline tables, every figure (inline SVG), the\n"
      "CSV tables and the configurations. The page loads nothing from the network and runs no\n"
      "script; it reads on a phone and prints.\n"
      "Example: servesim sweep --grid rate=2,4,8 --out sweep/ && servesim report sweep/",
      &positional);
  if (!vm) return 0;
  const std::filesystem::path dir = (*vm)["dir"].as<std::string>();
  if (vm->count("output") != 0) check_output_file("--output", (*vm)["output"].as<std::string>());
  const HtmlReport report = html_report(dir);
  const std::filesystem::path path = vm->count("output") != 0
                                         ? std::filesystem::path((*vm)["output"].as<std::string>())
                                         : dir / "report.html";
  write_atomically(path, report.html);
  context.out << "Wrote " << path.string() << ": the " << report.kind << " report, "
              << report.figures << " figure" << (report.figures == 1 ? "" : "s") << '\n';
  if (!report.unrendered.empty()) {
    context.err << "servesim: warning: " << report.unrendered.size()
                << " figure(s) have a gnuplot script but no SVG or PNG; run `servesim plot "
                << dir.string() << "` first to include them\n";
  }
  return 0;
}

}  // namespace servesim::cli
