#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace servesim {

// Simulated time: integer nanoseconds since the start of the run. Integer time makes event
// order exact and runs reproducible; cost models compute in double seconds and convert once.
class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime from_ns(std::int64_t ns) { return SimTime(ns); }
  // Rounds to the nearest nanosecond (arrival times read from traces or drawn at random).
  static SimTime from_seconds(double seconds) {
    return SimTime(static_cast<std::int64_t>(std::llround(seconds * 1e9)));
  }
  // A duration: rounds up, and any positive duration lasts at least 1 ns, so work always
  // advances the clock.
  static SimTime duration_from_seconds(double seconds) {
    if (!(seconds > 0)) return SimTime(0);
    // ceil without the library call (once per priced iteration): truncation is the floor of
    // a positive value, and exact below 2^63 ns.
    const double ns = seconds * 1e9;
    auto whole = static_cast<std::int64_t>(ns);
    if (static_cast<double>(whole) < ns) ++whole;
    return SimTime(std::max<std::int64_t>(1, whole));
  }
  static constexpr SimTime max() { return SimTime(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t ns() const { return ns_; }
  // The double nearest the exact decimal ns_ / 10^9 (a correctly rounded division; ns * 1e-9
  // is not, and prints as 0.010630638000000001): so a time prints, shortest round trip, as
  // its nanoseconds in decimal (0.010630638), exactly below 10^15 ns (11.6 days), where a
  // decimal of 15 significant digits is the shortest text of its double.
  constexpr double seconds() const { return static_cast<double>(ns_) / 1e9; }

  constexpr auto operator<=>(const SimTime&) const = default;
  constexpr SimTime operator+(SimTime other) const { return SimTime(ns_ + other.ns_); }
  constexpr SimTime operator-(SimTime other) const { return SimTime(ns_ - other.ns_); }
  constexpr SimTime& operator+=(SimTime other) {
    ns_ += other.ns_;
    return *this;
  }

 private:
  constexpr explicit SimTime(std::int64_t ns) : ns_(ns) {}
  std::int64_t ns_ = 0;
};

}  // namespace servesim
