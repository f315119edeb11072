#pragma once

#include <filesystem>
#include <vector>

#include "sim/app/app.h"
#include "sim/study/grid.h"
#include "sim/study/point_executor.h"
#include "sim/study/point_journal.h"
#include "sim/study/sweep_result.h"

namespace servesim {

class ProgressMeter;

// Runs every combination of `axes` over the `base` configuration (each point the same seed,
// its axis values applied last through `overrides_for`) on `executor`, and returns one row
// per point in grid order: its summary, with its steady state and stability verdict under
// "steady_state" (steady_state.h; the run's length is the configured one), or
// {"does_not_fit": REASON} for a point that cannot be served. Configurations are all checked before
// any point runs; errors name the point
// ("grid point 3 (rate=4, scheduler=orca)"). With a journal, finished points are skipped and
// new ones recorded (point_journal.h).
SweepResult run_sweep(const ConfigSources& base, const std::vector<GridAxis>& axes,
                      const AxisOverrides& overrides_for, IPointExecutor& executor,
                      const std::filesystem::path& data_root,
                      const std::filesystem::path& working_dir, ProgressMeter* progress,
                      PointJournal* journal = nullptr);

}  // namespace servesim
