#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <ostream>
#include <string>

namespace servesim {

// "sweep: 12/40 points, 3 s elapsed, about 7 s left" on one terminal line, rewritten as
// points complete. Thread-safe. When `enabled` is false (output is not a terminal) it prints
// nothing, so logs and pipes stay clean.
class ProgressMeter {
 public:
  ProgressMeter(std::ostream& out, std::string label, bool enabled);
  ~ProgressMeter();
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;

  // Adds `points` to the total expected (searches learn their size as they go).
  void expect(std::size_t points);
  void point_done();
  std::size_t done() const;

 private:
  void draw();  // with mutex_ held

  std::ostream& out_;
  std::string label_;
  bool enabled_;
  mutable std::mutex mutex_;
  std::size_t total_ = 0;
  std::size_t done_ = 0;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace servesim
