// The MLP: a dense model's, or an MoE layer's router, routed and shared experts, and an MoE
// model's dense layers apart.
#include <algorithm>
#include <cmath>

#include "sim/hardware/impl/roofline_model.h"
#include "sim/hardware/kernel_work.h"
#include "sim/hardware/moe_routing.h"

namespace servesim {

double RooflineModel::routed_probability() const noexcept {
  return std::min(1.0, expert_copies_per_token_ * expert_degree_ / experts_);
}

RooflineModel::Grouped RooflineModel::grouped_kernel(double moe_tokens) const noexcept {
  Grouped g;
  g.kernel.kind = GemmKernelKind::Grouped;
  g.kernel.family = weight_family_;
  g.kernel.fitted = false;
  g.kernel.tile_m =
      grouped_block_m(weight_family_, block_scaled_, moe_tokens, experts_, experts_per_token_);
  g.kernel.tile_n = kGroupedTileN;
  g.row_tiles =
      local_experts_ * expected_row_tiles(moe_tokens, routed_probability(), g.kernel.tile_m);
  return g;
}

double RooflineModel::price_mlp(IterationCost& cost, double tokens) const noexcept {
  const KernelCeilings& up = kernels_.gemm_for(GemmOperator::MlpUp);
  const KernelCeilings& down = kernels_.gemm_for(GemmOperator::MlpDown);
  if (!moe_) {
    price_dense_mlp(cost, tokens, up, down);
    return tokens;
  }
  return price_moe_mlp(cost, tokens, up, down);
}

void RooflineModel::price_dense_mlp(IterationCost& cost, double tokens, const KernelCeilings& up,
                                    const KernelCeilings& down) const noexcept {
  // A dense model: one GEMM each way over the step's tokens.
  const double a = activation_bytes_;
  const double l = layers_;
  const double up_width = (gated_ ? 2 : 1) * intermediate_;
  price_gemm(
      cost.at(OperatorKind::MlpUp),
      {dense_gemm(weight_family_, tokens, up_width, hidden_, l, up, weight_peak_flops_per_s_)},
      l * (hidden_ * up_width * weight_bytes_ + tokens * hidden_ * a + tokens * up_width * a), up,
      tokens, l);
  price(cost.at(OperatorKind::MlpAct), l * 4 * tokens * intermediate_,
        l * tokens * (up_width + intermediate_) * a, elementwise_, tokens, l);
  price_gemm(cost.at(OperatorKind::MlpDown),
             {dense_gemm(weight_family_, tokens, hidden_, intermediate_, l, down,
                         weight_peak_flops_per_s_)},
             l * (intermediate_ * hidden_ * weight_bytes_ + tokens * intermediate_ * a +
                  tokens * hidden_ * a),
             down, tokens, l);
}

double RooflineModel::price_moe_mlp(IterationCost& cost, double tokens, const KernelCeilings& up,
                                    const KernelCeilings& down) const noexcept {
  const double a = activation_bytes_;
  const double l = layers_;
  const double up_width = (gated_ ? 2 : 1) * intermediate_;
  // MoE layers (docs/cost_model.md, "MoE routing"). With top-k routing over E experts, the step's B
  // tokens touch E (1 - (1 - k/E)^B) distinct experts in expectation (uniform routing): the only
  // routed weights streamed. With data-parallel attention the MoE layers take every rank's tokens,
  // each rank padded to the busiest one's count (as vLLM pads its DP ranks' batches to the same
  // size).
  const double ranks = static_cast<double>(data_ranks_);
  const double moe_tokens = tokens * ranks;
  const double routed_experts =
      local_experts_ * (1 - std::pow(1 - experts_per_token_ / experts_, moe_tokens));
  const double copies = moe_tokens * expert_copies_per_token_;
  // The routed experts run as one grouped GEMM whose tiles are sized for the tokens per expert; the
  // shared experts (their width over a routed expert's, sliced by TP within a rank) as a dense GEMM
  // over the rank's own tokens; so do the model's dense layers (DeepSeek's first three, Llama 4's
  // interleaved ones), at their own width, and the router.
  const Grouped grouped = grouped_kernel(moe_tokens);
  const double m = moe_layers_;
  const double dl = dense_layers_;
  const double shared = shared_experts_;
  const double dense_up = (gated_ ? 2 : 1) * dense_intermediate_;
  const double di = dense_intermediate_;
  const double wp = weight_peak_flops_per_s_;
  const auto grouped_part = [&](double n, double k) {
    GemmPart part;
    part.kernel = grouped.kernel;
    part.flops = m * 2 * copies * n * k;
    part.idle_flops =
        m * grouped_idle_flops(grouped.kernel, grouped.row_tiles, copies, n, k, hardware_.sm_count);
    part.size = copies;
    part.peak_flops_per_s = wp;
    return part;
  };
  const auto optional_gemm = [&](double layers, double n, double k, const KernelCeilings& c,
                                 GemmFamily family, double peak) {
    return layers > 0 && n > 0 && k > 0 ? dense_gemm(family, tokens, n, k, layers, c, peak)
                                        : GemmPart{};
  };
  const double shared_tokens = tokens * shared;
  price_gemm(cost.at(OperatorKind::MlpUp),
             {grouped_part(up_width, hidden_),
              optional_gemm(m, up_width * shared, hidden_, up, weight_family_, wp),
              optional_gemm(m, experts_, hidden_, up, GemmFamily::Cublas, wide_peak_flops_per_s_),
              optional_gemm(dl, dense_up, hidden_, up, weight_family_, wp)},
             m * ((routed_experts + shared) * hidden_ * up_width * weight_bytes_ +
                  tokens * hidden_ * a + (copies + shared_tokens) * up_width * a) +
                 dl * (hidden_ * dense_up * weight_bytes_ + tokens * (hidden_ + dense_up) * a),
             up, tokens, 2 * m + dl);
  price(cost.at(OperatorKind::MlpAct),
        m * 4 * (copies + shared_tokens) * intermediate_ + dl * 4 * tokens * di,
        m * (copies + shared_tokens) * (up_width + intermediate_) * a +
            dl * tokens * (dense_up + di) * a,
        elementwise_, tokens, l);
  price_gemm(cost.at(OperatorKind::MlpDown),
             {grouped_part(hidden_, intermediate_),
              optional_gemm(m, hidden_, intermediate_ * shared, down, weight_family_, wp),
              optional_gemm(dl, hidden_, di, down, weight_family_, wp)},
             m * ((routed_experts + shared) * intermediate_ * hidden_ * weight_bytes_ +
                  (copies + shared_tokens) * intermediate_ * a + tokens * hidden_ * a) +
                 dl * (di * hidden_ * weight_bytes_ + tokens * (di + hidden_) * a),
             down, tokens, l);
  return moe_tokens;
}

}  // namespace servesim
