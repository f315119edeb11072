#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/core/sim_time.h"

namespace servesim {

// Every error servesim reports to a user belongs to one class; the CLI maps the class to
// the process exit code documented in the README, so scripts can tell them apart.
enum class ErrorKind {
  Usage,       // bad command line: unknown flag, missing value, conflicting options
  Input,       // a file or value is malformed or out of range
  Infeasible,  // well-formed but impossible: the model does not fit the memory, ...
  Internal,    // a runtime invariant failed: a bug in servesim
};

int exit_code_for(ErrorKind kind) noexcept;

class Error : public std::runtime_error {
 public:
  // A NUL byte an input put in the message is kept as the two characters \0: what() is a C
  // string, and every catch that adds context to it would otherwise cut the rest.
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(without_nul(message)), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  static std::string without_nul(std::string text) {
    for (auto at = text.find('\0'); at != std::string::npos; at = text.find('\0', at + 2))
      text.replace(at, 1, "\\0");
    return text;
  }

  ErrorKind kind_;
};

// Bad command-line usage.
class UsageError final : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ErrorKind::Usage, message) {}
};

// Malformed or out-of-range input. `where` names the file (and line or key path) or the
// command-line flag the bad value came from.
class InputError final : public Error {
 public:
  InputError(const std::string& where, const std::string& message)
      : Error(ErrorKind::Input, where.empty() ? message : where + ": " + message) {}
};

// A configuration that is valid on its own but cannot be served: it does not fit, or the
// engine refuses to start it (refused_start: a start-up check of the engine's, which a study
// lists as "does not start").
class InfeasibleError final : public Error {
 public:
  explicit InfeasibleError(const std::string& message) : Error(ErrorKind::Infeasible, message) {}
  static InfeasibleError engine_refuses_start(const std::string& message) {
    InfeasibleError error(message);
    error.refused_start_ = true;
    return error;
  }
  bool refused_start() const noexcept { return refused_start_; }

 private:
  bool refused_start_ = false;
};

// A broken invariant; never the user's fault. The runtime invariants of a serving run
// (kv_within_capacity, blocks_conserved, time_monotonic, requests_terminate,
// batch_token_budget) are named; the event loop adds the simulated time at which one broke,
// so the message reads "invariant NAME violated at t=12.345678901 s: DETAIL".
class InvariantError final : public Error {
 public:
  explicit InvariantError(const std::string& message)
      : InvariantError(std::string(), message, std::nullopt) {}
  InvariantError(std::string name, std::string detail, std::optional<SimTime> at = std::nullopt)
      : Error(ErrorKind::Internal, format(name, detail, at)),
        name_(std::move(name)),
        detail_(std::move(detail)),
        at_(at) {}

  const std::string& invariant() const noexcept { return name_; }
  const std::string& detail() const noexcept { return detail_; }
  std::optional<SimTime> time() const noexcept { return at_; }
  // The same violation, stamped with the simulated time it was found at (kept if it has one).
  InvariantError at(SimTime now) const { return InvariantError(name_, detail_, at_ ? at_ : now); }

 private:
  static std::string format(const std::string& name, const std::string& detail,
                            std::optional<SimTime> at) {
    if (name.empty() && !at) return detail;
    std::string text = "invariant " + (name.empty() ? std::string("internal") : name) + " violated";
    if (at) {
      char seconds[48];
      std::snprintf(seconds, sizeof seconds, " at t=%.9f s", at->seconds());
      text += seconds;
    }
    return text + ": " + detail;
  }

  std::string name_;
  std::string detail_;
  std::optional<SimTime> at_;
};

}  // namespace servesim
