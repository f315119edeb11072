#pragma once

namespace servesim {

// The processes one command runs on: just this one, or the ranks of an MPI job. Every rank
// runs the same command; rank 0 alone prints and writes files.
struct ProcessGroup {
  int rank = 0;
  int size = 1;
  bool leader() const noexcept { return rank == 0; }
};

}  // namespace servesim
