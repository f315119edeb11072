#include "sim/app/run_flags.h"

#include "sim/app/config_assembly.h"
#include "sim/app/vllm_names.h"

namespace servesim {
namespace {

constexpr RunFlag kRunFlags[] = {
    {"model", "model", FlagType::Text, "NAME|PATH", "model (default llama-3-8b)"},
    {"hw", "hardware", FlagType::Text, "NAME|PATH", "hardware profile (default h100-sxm)"},
    {"tp", "tp", FlagType::Integer, "T", "tensor-parallel GPUs per replica (default 1)"},
    {"pp", "pp", FlagType::Integer, "P", "pipeline stages per replica (default 1)"},
    {"dp", "data_parallel", FlagType::Integer, "D",
     "data-parallel attention ranks of an MoE replica, each of --tp GPUs, with expert "
     "parallelism over all D x TP GPUs (default 1)"},
    {"expert-load-imbalance", "expert_load_imbalance", FlagType::Number, "F",
     "with expert parallelism: the busiest GPU's routed tokens over the even share (default 1)"},
    {"replicas", "replicas", FlagType::Integer, "N", "model replicas (default 1)"},
    {"prefill-replicas", "disaggregation.prefill.replicas", FlagType::Integer, "N",
     "prefill/decode disaggregation: prefill replicas (with --decode-replicas)"},
    {"decode-replicas", "disaggregation.decode.replicas", FlagType::Integer, "N",
     "prefill/decode disaggregation: decode replicas (with --prefill-replicas)"},
    {"prefill-tp", "disaggregation.prefill.tp", FlagType::Integer, "T",
     "disaggregation: tensor-parallel GPUs per prefill replica (default --tp)"},
    {"decode-tp", "disaggregation.decode.tp", FlagType::Integer, "T",
     "disaggregation: tensor-parallel GPUs per decode replica (default --tp)"},
    {"prefill-hw", "disaggregation.prefill.hardware", FlagType::Text, "NAME|PATH",
     "disaggregation: the prefill replicas' hardware (default --hw)"},
    {"decode-hw", "disaggregation.decode.hardware", FlagType::Text, "NAME|PATH",
     "disaggregation: the decode replicas' hardware (default --hw)"},
    {"router", "router", FlagType::Text, "NAME",
     "round_robin (default), least_outstanding, least_kv, prefix_aware (with prefix caching; "
     "section routing) or random"},
    {"engine", "engine.name", FlagType::Text, "NAME|PATH",
     "serving engine from engines/ or a profile path: its scheduler and defaults, host costs, "
     "CUDA graphs and kernel factors (default vllm, vLLM's V1 engine)"},
    {"scheduler", "scheduler.name", FlagType::Text, "NAME",
     "batch scheduler (default: the engine's; vllm_v1 for vllm)"},
    {"max-num-seqs", "scheduler.max_num_seqs", FlagType::Integer, "N",
     "vllm, orca, sarathi, vllm_v1: running requests per replica at most (default: the "
     "engine's, 1024 for vllm on a GPU of 70 GiB or more; 256 otherwise)"},
    {"max-batched-tokens", "scheduler.max_num_batched_tokens", FlagType::Integer, "TOKENS",
     "vllm, orca, vllm_v1: tokens (vllm, vllm_v1) or prompt tokens (orca) per iteration at most "
     "(default 8192; vllm: max(max-len, 2048), and at least max-len)"},
    {"batch-size", "scheduler.batch_size", FlagType::Integer, "N",
     "static scheduler: requests per batch (default 8)"},
    {"token-budget", "scheduler.token_budget", FlagType::Integer, "TOKENS",
     "sarathi scheduler: tokens per iteration (default 512)"},
    {"preemption", "scheduler.preemption", FlagType::Text, "MODE",
     "vllm: recompute (default) or swap, over the host link into memory.swap_space_gib"},
    {"swap-space", "memory.swap_space_gib", FlagType::Number, "GIB",
     "host memory per GPU for --preemption swap, GiB (default 4; vLLM's name and unit)"},
    {"allocator", "allocator.name", FlagType::Text, "NAME", "KV allocator (default paged)"},
    {"block-size", "allocator.block_size", FlagType::Integer, "TOKENS",
     "paged allocator: tokens per block (default: the engine's, 16 for vllm)"},
    {"reservation", "allocator.reservation", FlagType::Text, "POLICY",
     "contiguous allocator: max (default), pow2, oracle or fixed"},
    {"placement", "allocator.placement", FlagType::Text, "POLICY",
     "contiguous allocator: buddy (default) or first_fit"},
    {"cost-model", "cost_model.name", FlagType::Text, "NAME",
     "iteration cost model (default roofline)"},
    {"mem-util", "memory.mem_util", FlagType::Number, "F",
     "share of GPU memory the engine may use (default: the engine's, 0.9 for vllm)"},
    {"kv-capacity-tokens", "memory.kv_capacity_tokens", FlagType::Integer, "TOKENS",
     "KV capacity per replica, overriding the computed one"},
    {"kv-capacity-gib", "memory.kv_capacity_gib", FlagType::Number, "GIB",
     "KV capacity per replica in GiB of KV bytes, overriding the computed one"},
    {"max-len", "max_len", FlagType::Integer, "TOKENS",
     "maximum prompt + output tokens, at most the model's max_position_embeddings (the "
     "default)"},
    {"max-len-policy", "max_len_policy", FlagType::Text, "POLICY",
     "a request whose prompt + output passes --max-len: cut (default; its output stops at "
     "max-len, as vLLM's engine) or reject (as vLLM's API server for prompt + max_tokens)"},
    {"weight-dtype", "weight_dtype", FlagType::Text, "DTYPE", "weight format (default auto)"},
    {"kv-dtype", "kv_dtype", FlagType::Text, "DTYPE", "KV-cache format (default auto)"},
    {"workload", "workload", FlagType::Text, "NAME|PATH",
     "workload preset from workloads/, a JSON spec, or a trace to replay (Azure or plain CSV, "
     "Mooncake JSON lines; told by content) (default sharegpt at 8 req/s, 2,000 requests)"},
    {"arrival", "workload.arrival.process", FlagType::Text, "PROCESS",
     "poisson, gamma, constant, closed_loop or trace"},
    {"rate", "workload.arrival.rate_per_s", FlagType::Raw, "REQ_PER_S",
     "mean arrival rate, requests/s; inf sends everything at time 0; with a trace, its "
     "arrivals rescaled to this mean rate"},
    {"cv", "workload.arrival.cv", FlagType::Number, "CV",
     "gamma arrivals: coefficient of variation of the gaps (1 = Poisson, > 1 bursty)"},
    {"num-requests", "workload.num_requests", FlagType::Integer, "N", "stop after N requests"},
    {"max-concurrency", "workload.arrival.max_concurrency", FlagType::Integer, "N",
     "at most N requests in flight, as vllm bench serve's flag: arrivals keep their rate, one "
     "that comes while N are in flight is sent when one finishes (a client-side limit)"},
    {"duration", "workload.duration_s", FlagType::Number, "SECONDS", "no arrivals after this time"},
    {"time-scale", "workload.trace.time_scale", FlagType::Number, "F",
     "trace replay: multiply arrival times by F (2 = half the rate)"},
    {"seed", "seed", FlagType::Integer, "N", "random seed (default 0)"},
    {"slo-ttft", "slo.ttft_s", FlagType::Number, "SECONDS", "TTFT target for slo_attainment"},
    {"slo-tpot", "slo.tpot_s", FlagType::Number, "SECONDS", "TPOT target for slo_attainment"},
    {"slo-e2e", "slo.e2e_s", FlagType::Number, "SECONDS", "E2E latency target for slo_attainment"},
};

constexpr VllmFlag kVllmFlags[] = {
    {"tensor-parallel-size", "tp", "tp", FlagType::Integer, "T", "= --tp", nullptr},
    {"pipeline-parallel-size", "pp", "pp", FlagType::Integer, "P", "= --pp", nullptr},
    {"data-parallel-size", "data_parallel", "dp", FlagType::Integer, "D",
     "= --dp (with --enable-expert-parallel: data-parallel attention)", nullptr},
    {"max-model-len", "max_len", "max-len", FlagType::Integer, "TOKENS", "= --max-len", nullptr},
    {"gpu-memory-utilization", "memory.mem_util", "mem-util", FlagType::Number, "F", "= --mem-util",
     nullptr},
    {"max-num-batched-tokens", kSchedulerTokenLimitKey, "max-batched-tokens,token-budget",
     FlagType::Integer, "TOKENS",
     "tokens per iteration: = --max-batched-tokens (vllm, orca), = --token-budget (sarathi, "
     "the chunked-prefill budget)",
     nullptr},
    {"kv-cache-dtype", "kv_dtype", "kv-dtype", FlagType::Text, "DTYPE",
     "= --kv-dtype: auto, float16, bfloat16, fp8, fp8_e4m3 or fp8_e5m2 (both fp8: one byte per "
     "element)",
     &kv_dtype_for_vllm},
    {"quantization", "weight_dtype", "weight-dtype", FlagType::Text, "METHOD",
     "= --weight-dtype: fp8, fbgemm_fp8 (fp8); awq, awq_marlin, gptq, gptq_marlin (int4)",
     &weight_dtype_for_vllm_quantization},
    {"request-rate", "workload.arrival.rate_per_s", "rate", FlagType::Raw, "REQ_PER_S",
     "= --rate (vllm bench serve; inf sends every request at t = 0)", nullptr},
    {"num-prompts", "workload.num_requests", "num-requests", FlagType::Integer, "N",
     "= --num-requests (vllm bench serve)", nullptr},
};

constexpr OtherSetting kOtherSettings[] = {
    {"config", SettingKind::Text},
    {"set", SettingKind::List},
    {"prompt-tokens", SettingKind::Integer},
    {"disaggregation", SettingKind::Text},
    {"output-tokens", SettingKind::Integer},
    {"no-bulk-decode", SettingKind::Switch},
    {"enable-chunked-prefill", SettingKind::Switch},
    {"no-enable-chunked-prefill", SettingKind::Switch},
    {"enable-prefix-caching", SettingKind::Switch},
    {"no-enable-prefix-caching", SettingKind::Switch},
    {"enable-expert-parallel", SettingKind::Switch},
    {"goodput", SettingKind::List},
    {"speculative-config", SettingKind::Text},
    {"acceptance-rate", SettingKind::Text},
    {"burstiness", SettingKind::Number},
    {"dataset-name", SettingKind::Text},
    {"dataset-path", SettingKind::Text},
    {"random-input-len", SettingKind::Integer},
    {"random-output-len", SettingKind::Integer},
    {"random-range-ratio", SettingKind::Number},
    {"ignore-eos", SettingKind::Switch},
};

}  // namespace

std::span<const RunFlag> run_flags() {
  return kRunFlags;
}
std::span<const VllmFlag> vllm_flags() {
  return kVllmFlags;
}
std::span<const OtherSetting> other_settings() {
  return kOtherSettings;
}

bool is_switch(std::string_view name) {
  for (const OtherSetting& s : kOtherSettings) {
    if (s.name == name) return s.kind == SettingKind::Switch;
  }
  return false;
}

std::optional<std::string> config_key_for_flag(std::string_view flag) {
  for (const RunFlag& f : kRunFlags) {
    if (f.flag == flag) return std::string(f.key);
  }
  for (const VllmFlag& f : kVllmFlags) {
    if (f.flag == flag) return std::string(f.key);
  }
  return std::nullopt;
}

nlohmann::json config_value_for_flag(std::string_view flag, const nlohmann::json& value) {
  for (const VllmFlag& f : kVllmFlags) {
    if (f.flag == flag && f.value_of != nullptr && value.is_string()) {
      return f.value_of(value.get<std::string>());
    }
  }
  return value;
}

bool is_run_setting(std::string_view name) {
  for (const OtherSetting& s : kOtherSettings) {
    if (s.name == name) return true;
  }
  return config_key_for_flag(name).has_value();
}

}  // namespace servesim
