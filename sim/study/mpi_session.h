#pragma once

#include "sim/study/process_group.h"

namespace servesim {

// Joins the MPI job this process was started in (by mpirun), for the lifetime of the
// object. A process not started by an MPI launcher, or a build without SERVESIM_MPI, is a
// group of one and never touches MPI.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  ProcessGroup group() const noexcept { return group_; }

 private:
  ProcessGroup group_;
  bool initialized_ = false;
};

}  // namespace servesim
