#include "validation/harness_record.h"

#include <ostream>
#include <sstream>
#include <utility>
#include <vector>

namespace servesim::validation {

nlohmann::json kernel_json(const KernelInfo& kernel) {
  return {{"name", kernel.name},
          {"kind", kernel.kind},
          {"cores", kernel.cores},
          {"tile_m", kernel.tile_m},
          {"tile_n", kernel.tile_n}};
}

HarnessRecord make_record(std::string device_name, const QuantGemmShape& shape,
                          std::span<const double> samples_s) {
  HarnessRecord record{make_measurement(std::move(device_name), shape.gemm, samples_s), {}};
  const bool int4 = shape.format == WeightFormat::Int4;
  record.measurement.dtype = int4 ? DType::INT4 : DType::FP8;
  const std::string output(element_type_name(shape.gemm.dtype));
  record.extra = {{"activation_dtype", int4 ? output : "fp8"},
                  {"output_dtype", output},
                  {"kernel", kernel_json(quant_gemv_kernel(shape.format, shape.gemm.m))}};
  if (int4) record.extra["group_size"] = shape.group_size;
  return record;
}

HarnessRecord make_record(std::string device_name, const MoeGemmShape& shape,
                          const ExpertGroups& groups, std::span<const double> samples_s) {
  const GemmShape gemm{shape.op, groups.padded_rows, shape.n, shape.k, shape.dtype};
  HarnessRecord record{make_measurement(std::move(device_name), gemm, samples_s), {}};
  record.extra = {{"operator_kind", "moe_gemm"},
                  {"m", nullptr},
                  {"tokens", shape.tokens},
                  {"top_k", shape.top_k},
                  {"experts", shape.experts},
                  {"experts_touched", static_cast<std::int64_t>(groups.experts_touched.size())},
                  {"routed_rows", groups.routed_rows},
                  {"padded_rows", groups.padded_rows},
                  {"seed", shape.seed},
                  {"kernel", kernel_json(grouped_moe_kernel(groups.tile_rows))}};
  return record;
}

void write_harness_json(std::ostream& out, std::string_view device_name,
                        std::span<const HarnessRecord> records) {
  std::vector<Measurement> measurements;
  measurements.reserve(records.size());
  for (const HarnessRecord& record : records)
    measurements.push_back(record.measurement);
  std::ostringstream text;
  servesim::write_measurements_json(text, device_name, measurements);
  nlohmann::json document = nlohmann::json::parse(text.str());
  nlohmann::json& list = document.at("measurements");
  for (std::size_t i = 0; i < records.size(); ++i)
    list.at(i).merge_patch(records[i].extra);
  out << document.dump(2) << '\n';
}

}  // namespace servesim::validation
