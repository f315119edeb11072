#include "sim/study/point_executor.h"

#include "sim/study/thread_point_executor.h"
#ifdef SERVESIM_HAVE_MPI
#include "sim/study/mpi_point_executor.h"
#endif

namespace servesim {

std::unique_ptr<IPointExecutor> make_point_executor(int jobs, const ProcessGroup& processes) {
#ifdef SERVESIM_HAVE_MPI
  if (processes.size > 1) return make_mpi_point_executor(jobs, processes);
#else
  (void)processes;
#endif
  return std::make_unique<ThreadPointExecutor>(jobs);
}

}  // namespace servesim
