#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "sim/calibration/serving_point.h"

namespace servesim {

// Deployment reports: a CSV of serving commands as users ran them, each with the `vllm bench
// serve` block it produced (GPUStack's performance lab, ../shared/data/measured/README.md:
// columns doc, hardware, engine, serve_cmd, dataset, n_req, max_conc, rate, in_tok, out_tok,
// ttft_mean, tpot_mean, itl_mean, e2e_mean, out_tok_s, note; quoted fields, '#' lines first).
// Each row is replayed as vLLM's client sent it (BenchReplay): n_req requests of the measured
// mean prompt and output (in_tok / n_req, out_tok / n_req; the outputs ended at EOS), all at
// once or `max_conc` at a time. The deployment comes from the serving command: the model
// (`vllm serve M`, `trtllm-serve M`, `--model-path M`; a -FP8 or -AWQ checkpoint is fp8 or
// int4 weights), -tp/--tp-size/--tensor-parallel-size, --enable-expert-parallel,
// --max-num-batched-tokens (TensorRT-LLM's --max_num_tokens), --max-model-len (--max_seq_len)
// and SGLang's --cuda-graph-max-bs; the GPU from the hardware column. A command running what
// servesim does not model (speculative decoding, another attention backend, torch.compile) is
// read with the reason in ServingPoint::unsupported and reported, not predicted.
bool is_deployment_report_header(std::string_view header_line);
std::vector<ServingPoint> read_deployment_report(const std::filesystem::path& file,
                                                 const ServingPointOptions& options);

}  // namespace servesim
