#include "sim/calibration/operator_validation.h"

#include "sim/core/error.h"
#include "sim/metrics/csv_format.h"

namespace servesim {

std::string operator_predictions_csv(std::span<const Measurement> records,
                                     std::span<const double> predicted_s) {
  if (records.size() != predicted_s.size()) {
    throw InvariantError("operator predictions: " + std::to_string(predicted_s.size()) +
                         " predictions for " + std::to_string(records.size()) + " records");
  }
  std::string text =
      "source,record,class,kind,operator,timing,calls_per_sample,m,n,k,tp,model,measured_s,"
      "predicted_s,relative_error\n";
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Measurement& r = records[i];
    text += csv_field(r.source) + "," + csv_field(r.where) + "," + csv_field(r.class_name()) + "," +
            std::string(measurement_kind_name(r.kind)) + "," + csv_field(r.gemm_operator) + "," +
            csv_field(r.timing) + "," + std::to_string(r.calls_per_sample) + "," +
            std::to_string(r.m) + "," + std::to_string(r.n) + "," + std::to_string(r.k) + "," +
            std::to_string(r.tp) + "," + csv_field(r.model) + "," + format_9_digits(r.median_s) +
            "," + format_9_digits(predicted_s[i]) + "," +
            format_9_digits(predicted_s[i] / r.median_s - 1) + "\n";
  }
  return text;
}

}  // namespace servesim
