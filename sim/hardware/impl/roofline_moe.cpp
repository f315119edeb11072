// The MLP: a dense model's, or an MoE layer's router, routed and shared experts, and an MoE
// model's dense layers apart.
#include <cmath>

#include "sim/hardware/impl/roofline_model.h"
#include "sim/hardware/kernel_work.h"

namespace servesim {

double RooflineModel::price_mlp(IterationCost& cost, double tokens) const noexcept {
  const double a = activation_bytes_;
  const double l = layers_;
  const KernelCeilings& up = kernels_.gemm_for(GemmOperator::MlpUp);
  const KernelCeilings& down = kernels_.gemm_for(GemmOperator::MlpDown);
  const auto tiling = [this](const KernelCeilings& k) { return gemm_tiling(hardware_, k); };
  // With top-k routing over E experts, T tokens touch E (1 - (1 - k/E)^T) distinct experts
  // in expectation (uniform routing): the weights actually streamed.
  // Shared experts: as many more experts every token passes through (their width over the
  // routed experts' width).
  // With data-parallel attention the MoE layers take every rank's tokens, each rank padded
  // to the busiest one's count (as vLLM pads its DP ranks' batches to the same size); the
  // shared experts, sliced by TP within a rank, its own.
  const double ranks = static_cast<double>(data_ranks_);
  const double moe_tokens = tokens * ranks;
  const double experts_read =
      moe_ ? local_experts_ * (1 - std::pow(1 - experts_per_token_ / experts_, moe_tokens)) +
                 shared_experts_
           : 1.0;
  const double routed_tokens = tokens * (ranks * expert_copies_per_token_ + shared_experts_);
  const double up_width = (gated_ ? 2 : 1) * intermediate_;
  const double router_flops = moe_ ? 2 * tokens * hidden_ * experts_ : 0;
  // Each expert read runs one GEMM over its share of the routed tokens.
  const double expert_tokens = routed_tokens / experts_read;
  // An MoE model's dense layers (DeepSeek's first three, Llama 4's interleaved ones) run
  // one MLP of their own width.
  const double m = moe_ ? moe_layers_ : l;
  const double dl = moe_ ? dense_layers_ : 0;
  const double dense_up = (gated_ ? 2 : 1) * dense_intermediate_;
  const double di = dense_intermediate_;
  const auto dense = [&](double value) { return dl > 0 ? value : 0.0; };
  price(cost.at(OperatorKind::MlpUp),
        m * (2 * routed_tokens * hidden_ * up_width + router_flops) +
            dense(dl * 2 * tokens * hidden_ * dense_up),
        m * (experts_read * hidden_ * up_width * weight_bytes_ + tokens * hidden_ * a +
             routed_tokens * up_width * a) +
            dense(dl * (hidden_ * dense_up * weight_bytes_ + tokens * (hidden_ + dense_up) * a)),
        up, tokens, moe_ ? 2 * m + dl : l, 0,
        m * experts_read * gemm_idle_flops(expert_tokens, up_width, hidden_, tiling(up)) +
            dense(dl * gemm_idle_flops(tokens, dense_up, hidden_, tiling(up))));
  price(
      cost.at(OperatorKind::MlpAct),
      m * 4 * routed_tokens * intermediate_ + dense(dl * 4 * tokens * di),
      m * routed_tokens * (up_width + intermediate_) * a + dense(dl * tokens * (dense_up + di) * a),
      elementwise_, tokens, l);
  price(cost.at(OperatorKind::MlpDown),
        m * 2 * routed_tokens * intermediate_ * hidden_ + dense(dl * 2 * tokens * di * hidden_),
        m * (experts_read * intermediate_ * hidden_ * weight_bytes_ +
             routed_tokens * intermediate_ * a + tokens * hidden_ * a) +
            dense(dl * (di * hidden_ * weight_bytes_ + tokens * (di + hidden_) * a)),
        down, tokens, l, 0,
        m * experts_read * gemm_idle_flops(expert_tokens, hidden_, intermediate_, tiling(down)) +
            dense(dl * gemm_idle_flops(tokens, hidden_, di, tiling(down))));

  return moe_tokens;
}

}  // namespace servesim
