#pragma once

#include <pybind11/pybind11.h>

#include "python/capacity.h"
#include "sim/app/app.h"
#include "sim/study/slo.h"

namespace servesim::python {

// servesim.capacity(disaggregated=True): the layout search of `capacity --disaggregated`
// (sim/study/layout_study.h) as a dict of its deployments, best answers, front and points.
py::dict search_layouts(const ConfigSources& base, const SloTarget& slo,
                        const CapacityOptions& options);

}  // namespace servesim::python
