// Attention: prefill over what each layer's mask reaches, decode over the cached keys.
#include <algorithm>
#include <cstdint>

#include "sim/hardware/impl/roofline_model.h"
#include "sim/hardware/kernel_work.h"

namespace servesim {

void RooflineModel::price_attention(IterationCost& cost, const BatchShape& shape) const noexcept {
  const double prefill_tokens = static_cast<double>(shape.prefill_tokens);
  const double a = activation_bytes_;
  const double l = layers_;
  const double q_width = attention_q_width_;
  const double kv_width = attention_kv_width_;
  if (shape.prefill_tokens > 0) {
    // Attention layers over what their masks reach: full layers the whole context, windowed
    // ones (when the shape kept their sums, see AttentionSpans) the pairs and keys of their
    // window or chunk; recurrent layers update their state once per token, reading and
    // writing it once per sequence.
    const auto attention_work = [&](double context, double pairs, double masked) {
      return prefill_attention_work(prefill_tokens, context, pairs, masked, q_width, kv_width, a,
                                    kv_bytes_);
    };
    const KernelWork w = attention_work(static_cast<double>(shape.prefill_context_tokens),
                                        shape.prefill_attention_pairs, shape.prefill_masked_pairs);
    const double attention_layers = l - recurrent_layers_;
    double flops = attention_layers * w.flops, bytes = attention_layers * w.bytes;
    double masked_flops = attention_layers * w.masked_flops;
    if (window_layers_ + chunk_layers_ > 0 && shape.spans == spans_) {
      flops = full_layers_ * w.flops;
      bytes = full_layers_ * w.bytes;
      masked_flops = full_layers_ * w.masked_flops;
      const auto add_windowed = [&](double layers, const WindowedPrefill& sums) {
        if (layers == 0) return;
        const KernelWork k = attention_work(sums.context_keys, sums.pairs, sums.masked_pairs);
        flops += layers * k.flops;
        bytes += layers * k.bytes;
        masked_flops += layers * k.masked_flops;
      };
      add_windowed(window_layers_, shape.prefill_window);
      add_windowed(chunk_layers_, shape.prefill_chunked);
    }
    if (recurrent_layers_ > 0) {
      flops += recurrent_layers_ * 6 * recurrent_state_elements_ * prefill_tokens;
      bytes += recurrent_layers_ * 2 * recurrent_state_elements_ * a *
               static_cast<double>(shape.prefill_sequences);
    }
    price(cost.at(OperatorKind::AttentionPrefill), flops, bytes, kernels_.prefill_attention,
          prefill_tokens / static_cast<double>(shape.prefill_sequences), l, masked_flops, 0);
  }
  if (shape.decode_sequences > 0) {
    price_decode_attention(cost, shape, decode_attention(shape.decode_sequences));
  }
}

void RooflineModel::price_decode_attention(IterationCost& cost, const BatchShape& shape,
                                           const DecodeAttention& attention) const noexcept {
  const double context = static_cast<double>(shape.decode_context_tokens);
  record(cost.at(OperatorKind::AttentionDecode),
         attention.layers * attention.flops(context) + attention.extra_flops(context),
         attention.layers * attention.bytes(context) + attention.extra_bytes(context),
         attention.time(context), kernels_.decode_attention,
         static_cast<double>(shape.decode_sequences));
}

RooflineModel::DecodeAttention RooflineModel::decode_attention(
    std::int64_t sequences) const noexcept {
  const double n = static_cast<double>(sequences);
  const double q_width = attention_q_width_;
  const double kv_width = attention_kv_width_;
  const KernelWork per_sequence =
      decode_attention_work(n, 0, q_width, kv_width, activation_bytes_, kv_bytes_);
  const KernelCeilings& ceilings = kernels_.decode_attention;
  const double l = layers_;
  const double size = std::max(n, 1.0);
  DecodeAttention d;
  d.layers = full_layers_;
  d.window_layers = window_layers_;
  d.window_keys = n * window_tokens_;
  d.chunk_layers = chunk_layers_;
  d.chunk_keys = n * chunk_tokens_;
  // A recurrent layer's decode: the state decays, takes one rank-one update and is read out
  // (about 6 FLOPs per element), read and written once per sequence in 16 bits.
  d.recurrent_layers = recurrent_layers_;
  d.recurrent_flops = 6 * recurrent_state_elements_ * n;
  d.recurrent_bytes = 2 * recurrent_state_elements_ * activation_bytes_ * n;
  d.q_width = q_width;
  d.kv_width = kv_width;
  d.kv_bytes = kv_bytes_;
  d.sequence_bytes = per_sequence.bytes;
  d.compute_flops_per_s = compute_flops_per_s_;
  d.memory_bytes_per_s = memory_bytes_per_s_;
  d.compute_efficiency = ceilings.compute_efficiency;
  d.memory_efficiency = ceilings.memory_efficiency;
  d.compute_scale = 1 + ceilings.compute_half_size / size;
  d.memory_scale = 1 + ceilings.memory_half_size / size;
  d.fixed_s = l * ceilings.fixed_s;
  if (const auto& window = kernels_.decode_attention_window;
      window && d.window_layers + d.chunk_layers > 0) {
    // The profile measured windowed decode apart: those layers' kernels on their own ceilings,
    // and the fixed time per layer split between the two.
    const double windowed = d.window_layers + d.chunk_layers;
    d.window_apart = true;
    d.window_compute_efficiency = window->compute_efficiency;
    d.window_memory_efficiency = window->memory_efficiency;
    d.window_compute_scale = 1 + window->compute_half_size / size;
    d.window_memory_scale = 1 + window->memory_half_size / size;
    d.window_fixed_s = windowed * window->fixed_s;
    d.fixed_s = (l - windowed) * ceilings.fixed_s;
  }
  if (decode_on_cuda_cores_) {
    // CUDA cores, not the tensor cores: the fp32 peak at the engine's share, flat in the batch.
    const EngineKernelFactors& k = options_.engine.kernels;
    d.compute_flops_per_s = fp32_flops_per_s_;
    d.compute_efficiency = k.decode_attention_core_efficiency / k.decode_attention;
    d.compute_scale = 1;
    d.sequence_flops = (d.layers + d.window_layers + d.chunk_layers) *
                       d.flops(n * k.decode_attention_core_sequence_keys);
  }
  return d;
}

}  // namespace servesim
