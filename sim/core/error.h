#pragma once

#include <stdexcept>
#include <string>

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
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
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

// A configuration that is valid on its own but cannot be served.
class InfeasibleError final : public Error {
 public:
  explicit InfeasibleError(const std::string& message) : Error(ErrorKind::Infeasible, message) {}
};

// A broken invariant; never the user's fault.
class InvariantError final : public Error {
 public:
  explicit InvariantError(const std::string& message) : Error(ErrorKind::Internal, message) {}
};

}  // namespace servesim
