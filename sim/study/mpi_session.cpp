#include "sim/study/mpi_session.h"

#include <cstdlib>
#include <initializer_list>

#ifdef SERVESIM_HAVE_MPI
#include <mpi.h>
#endif

namespace servesim {
namespace {

// Launchers (Open MPI's mpirun, PMIx, Hydra) set these in every rank's environment.
bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace

MpiSession::MpiSession([[maybe_unused]] int* argc, [[maybe_unused]] char*** argv) {
#ifdef SERVESIM_HAVE_MPI
  if (!started_by_mpi_launcher()) return;
  MPI_Init(argc, argv);
  initialized_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &group_.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &group_.size);
#else
  (void)started_by_mpi_launcher;
#endif
}

MpiSession::~MpiSession() {
#ifdef SERVESIM_HAVE_MPI
  if (initialized_) MPI_Finalize();
#endif
}

}  // namespace servesim
