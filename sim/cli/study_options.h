#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sim/app/app.h"
#include "sim/cli/options.h"
#include "sim/study/point_executor.h"
#include "sim/study/point_journal.h"

namespace servesim::cli {

// -j/--jobs, shared by the commands that run many simulations.
void add_jobs_option(po::options_description& options);
// The executor those options ask for: threads, and the ranks of an MPI job.
std::unique_ptr<IPointExecutor> executor_from(const po::variables_map& vm,
                                              const CommandContext& context);

// --resume DIR, shared by sweep and capacity.
void add_resume_option(po::options_description& options);
// Where a study writes its files: --out, or the folder --resume continues (both may be given
// when they name the same folder).
std::optional<std::string> study_out_dir(const po::variables_map& vm);
// The journal of a study that writes files, kept beside its folder (PointJournal::location):
// started for --out, or continued for --resume (which must have a journal of the same
// command with the same arguments, but for --out, --resume, --jobs, --json and --no-plots);
// none without either. The folder is checked as publish_output will check it, so that a
// study refuses a bad --out before it simulates anything.
std::optional<PointJournal> study_journal(const po::variables_map& vm,
                                          const CommandContext& context, std::string_view command);

}  // namespace servesim::cli
