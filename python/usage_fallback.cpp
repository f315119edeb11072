#include "python/usage_fallback.h"

#include <pybind11/eval.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/suggest.h"

namespace servesim::python {
namespace {

// The first line of pybind11's docstring: "name(a: int = 1, *, b: str = 'x', **kwargs) -> dict".
std::string signature_of(const py::module_& module, const char* name) {
  const std::string doc = py::str(module.attr(name).attr("__doc__")).cast<std::string>();
  return doc.substr(0, doc.find('\n'));
}

std::vector<std::string> parameters_of(const std::string& signature) {
  static const std::regex parameter(R"((?:\(|, )(?:\*, )?(\w+): )");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(signature.begin(), signature.end(), parameter);
       it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1].str());
  }
  return names;
}

}  // namespace

void add_usage_fallback(py::module_& module, const char* name) {
  const std::string signature = signature_of(module, name);
  const std::vector<std::string> parameters = parameters_of(signature);
  const bool any_keyword = signature.find("**kwargs") != std::string::npos;
  const std::string function = std::string(name) + "()";
  const py::cpp_function raise_usage_error([function, signature, parameters, any_keyword](
                                               const py::args& args, const py::kwargs& kwargs) {
    std::string given;
    for (const auto& item : args)
      given += (given.empty() ? "" : ", ") + py::repr(item).cast<std::string>();
    for (const auto& [key, value] : kwargs) {
      const std::string keyword = key.cast<std::string>();
      const bool known =
          std::find(parameters.begin(), parameters.end(), keyword) != parameters.end();
      if (!known && !any_keyword) {
        const std::string hint = did_you_mean(keyword, parameters);
        throw UsageError(function + ": unknown keyword \"" + keyword + "\"" +
                         (hint.empty() ? "; expected " + signature : ": " + hint));
      }
      given += (given.empty() ? "" : ", ") + keyword + "=" + py::repr(value).cast<std::string>();
    }
    throw UsageError(function + ": arguments of the wrong type, or a required one missing (" +
                     given + "); expected " + signature);
  });
  // pybind11 reports arguments that match no signature as a TypeError before the binding runs;
  // a wrapper with the binding's name and docstring turns that one into the usage error. (An
  // overload taking any arguments would not do: pybind11 tries every overload without
  // conversions first, so it would win over an int given for a float.)
  py::dict scope;
  py::exec(R"(
import functools

def wrap(binding, raise_usage_error):
    @functools.wraps(binding)
    def call(*args, **kwargs):
        try:
            return binding(*args, **kwargs)
        except TypeError as error:
            if "incompatible function arguments" not in str(error):
                raise
        raise_usage_error(*args, **kwargs)
    return call
)",
           scope);
  module.attr(name) = scope["wrap"](module.attr(name), raise_usage_error);
}

}  // namespace servesim::python
