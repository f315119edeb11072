#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "validation/expert_routing.h"
#include "validation/kernel_info.h"
#include "validation/measurement.h"
#include "validation/shapes.h"

namespace servesim::validation {

// A record as the harness writes it: the simulator's Measurement, written by the simulator's
// writer, plus fields its reader does not hold yet, merged into the record's JSON object as an
// RFC 7386 merge patch (a null removes a field the writer put there). Records of the original
// subcommands have no extra fields and come out exactly as the simulator writes them.
struct HarnessRecord {
  Measurement measurement;
  nlohmann::json extra = nlohmann::json::object();
};

// A `quant-gemm` record: operator_kind "gemm" with `dtype` the weight format (int4, fp8) and
// m, n, k, operator as for 16-bit GEMMs, plus `activation_dtype` (the 16-bit type for int4,
// fp8 for fp8), `output_dtype`, `group_size` (int4 only) and `kernel` (kernel_info.h).
HarnessRecord make_record(std::string device_name, const QuantGemmShape& shape,
                          std::span<const double> samples_s);

// A `moe-gemm` record: operator_kind "moe_gemm", operator (mlp_up, mlp_down), n, k, dtype and
// the routing it ran: tokens, top_k, experts, experts_touched, routed_rows (tokens x top_k),
// padded_rows (the rows the kernel computed), seed, and `kernel`.
HarnessRecord make_record(std::string device_name, const MoeGemmShape& shape,
                          const ExpertGroups& groups, std::span<const double> samples_s);

// The JSON object of `kernel`.
nlohmann::json kernel_json(const KernelInfo& kernel);

// Writes the servesim-measurements document of `records` (write_measurements_json for the
// simulator's fields, then each record's extra fields).
void write_harness_json(std::ostream& out, std::string_view device_name,
                        std::span<const HarnessRecord> records);

}  // namespace servesim::validation
