#include "sim/app/metrics_observer.h"

namespace servesim {

void MetricsObserver::on_request_finished(const Request& request, SimTime now) {
  RequestRecord record;
  record.id = request.spec.id;
  record.replica = request.replica;
  record.arrival_s = request.spec.arrival.seconds();
  record.first_scheduled_s = request.first_scheduled.seconds();
  record.first_token_s = request.first_token.seconds();
  record.completion_s = now.seconds();
  record.prompt_tokens = request.spec.prompt_tokens;
  record.output_tokens = request.generated_tokens;
  record.cut_output_tokens = request.cut_output_tokens();
  record.preemptions = request.preemptions;
  record.cached_tokens = request.cached_prompt_tokens;
  record.host_cached_tokens = request.host_cached_prompt_tokens;
  collector_.on_request_finished(record);
}

void MetricsObserver::on_request_rejected(const RequestSpec& request, const std::string& reason,
                                          SimTime /*now*/) {
  RequestRecord record;
  record.id = request.id;
  record.arrival_s = request.arrival.seconds();
  record.prompt_tokens = request.prompt_tokens;
  record.output_tokens = request.output_tokens;
  record.rejected = true;
  record.reject_reason = reason;
  collector_.on_request_rejected(record);
}

}  // namespace servesim
