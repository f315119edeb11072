#include "python/errors.h"

#include <exception>
#include <string>

#include "sim/core/error.h"

namespace servesim::python {
namespace {

struct KindClass {
  ErrorKind kind;
  const char* name;  // the Python class
  const char* kind_name;
  const char* doc;
};

constexpr KindClass kKindClasses[] = {
    {ErrorKind::Usage, "UsageError", "usage",
     "A call servesim cannot make sense of: an unknown setting, a value of the wrong type, two "
     "settings that are the same (the CLI's exit code 2)."},
    {ErrorKind::Input, "InputError", "input",
     "Malformed or out-of-range input: an unknown key or name, a bad value, a file that does "
     "not parse (exit code 3)."},
    {ErrorKind::Infeasible, "InfeasibleError", "infeasible",
     "A well-formed configuration that cannot be served: the model does not fit, every request "
     "is rejected (exit code 4)."},
    {ErrorKind::Internal, "InternalError", "internal",
     "A broken runtime invariant: a bug in servesim, please report it (exit code 5)."},
};

const KindClass& kind_class(ErrorKind kind) {
  for (const KindClass& k : kKindClasses) {
    if (k.kind == kind) return k;
  }
  return kKindClasses[3];
}

// Raises the servesim exception of `kind` with `message`; the classes are looked up on the
// module, so the translator holds no state of its own.
void raise(ErrorKind kind, const std::string& message) {
  const KindClass& k = kind_class(kind);
  const py::object cls = py::module_::import("servesim").attr(k.name);
  const py::object error = cls(message);
  error.attr("kind") = k.kind_name;
  error.attr("exit_code") = exit_code_for(kind);
  PyErr_SetObject(cls.ptr(), error.ptr());
}

}  // namespace

void add_error_classes(py::module_& module) {
  const py::object base = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "servesim.Error",
      "Every error servesim raises: str(e) is servesim's one-line message naming the key, file "
      "or value and what was expected; e.kind and e.exit_code classify it as the CLI does.",
      PyExc_Exception, nullptr));
  if (!base) throw py::error_already_set();
  module.attr("Error") = base;
  for (const KindClass& k : kKindClasses) {
    const std::string qualified = std::string("servesim.") + k.name;
    const py::object cls = py::reinterpret_steal<py::object>(
        PyErr_NewExceptionWithDoc(qualified.c_str(), k.doc, base.ptr(), nullptr));
    if (!cls) throw py::error_already_set();
    module.attr(k.name) = cls;
  }
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const Error& error) {
      raise(error.kind(), error.what());
    }
  });
}

}  // namespace servesim::python
