#pragma once

#include <memory>

#include "sim/study/point_executor.h"

namespace servesim {

// Spreads points over the ranks of an MPI job (rank r takes points r, r + size, ...), each
// rank on `jobs` threads, and shares every result with every rank, so that searches take
// the same next step everywhere. Built only with SERVESIM_MPI.
std::unique_ptr<IPointExecutor> make_mpi_point_executor(int jobs, const ProcessGroup& processes);

}  // namespace servesim
