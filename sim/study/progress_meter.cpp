#include "sim/study/progress_meter.h"

#include <cmath>

namespace servesim {

ProgressMeter::ProgressMeter(std::ostream& out, std::string label, bool enabled)
    : out_(out),
      label_(std::move(label)),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()) {}

ProgressMeter::~ProgressMeter() {
  if (drawn_) out_ << '\n' << std::flush;
}

void ProgressMeter::expect(std::size_t points) {
  const std::lock_guard lock(mutex_);
  total_ += points;
}

void ProgressMeter::point_done() {
  const std::lock_guard lock(mutex_);
  ++done_;
  if (enabled_) draw();
}

std::size_t ProgressMeter::done() const {
  const std::lock_guard lock(mutex_);
  return done_;
}

void ProgressMeter::draw() {
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  out_ << '\r' << label_ << ": " << done_;
  if (total_ >= done_) out_ << '/' << total_;
  out_ << " points, " << std::lround(elapsed_s) << " s elapsed";
  if (total_ > done_ && done_ > 0) {
    const double left_s =
        elapsed_s / static_cast<double>(done_) * static_cast<double>(total_ - done_);
    out_ << ", about " << std::lround(left_s) << " s left";
  }
  out_ << "    " << std::flush;
  drawn_ = true;
}

}  // namespace servesim
