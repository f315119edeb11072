#include <catch2/catch.hpp>

#include "sim/hardware/impl/roofline_model.h"
#include "sim/model/model_size.h"
#include "tests/support/test_support.h"

using namespace servesim;
using test::shipped_hardware;
using test::shipped_model;

namespace {

BatchShape decodes(std::int64_t sequences, std::int64_t context) {
  BatchShape shape;
  shape.add_decodes(sequences, sequences * context);
  return shape;
}

double decode_attention_bytes(const RooflineModel& model, std::int64_t sequences,
                              std::int64_t context) {
  return model.estimate(decodes(sequences, context)).at(OperatorKind::AttentionDecode).bytes;
}

}  // namespace

TEST_CASE("MLA decode streams one 576-value latent per token and layer, on every TP rank",
          "[hardware][arch]") {
  RooflineOptions o;
  o.weight_dtype = DType::FP8;
  o.parallelism = {8, 1};
  const RooflineModel model(shipped_model("deepseek-v3"), shipped_hardware("h200"), o);
  // The cache term grows by 61 layers x 576 values x 2 B per context token, whatever TP.
  const double per_token =
      decode_attention_bytes(model, 4, 2001) - decode_attention_bytes(model, 4, 2000);
  CHECK(per_token == Approx(4 * 61.0 * 576 * 2));
}

TEST_CASE("windowed layers read at most W keys per sequence at decode", "[hardware][arch]") {
  const RooflineModel model(shipped_model("gpt-oss-120b"), shipped_hardware("h100-sxm"), {});
  // Past the 128-token window, one more context token adds only the 18 full layers' K and V
  // (8 KV heads x 64 x 2 x 2 B = 2,048 B per layer).
  const double past =
      decode_attention_bytes(model, 8, 4097) - decode_attention_bytes(model, 8, 4096);
  CHECK(past == Approx(8 * 18.0 * 2048));
  // Inside the window, every layer reads it.
  const double inside = decode_attention_bytes(model, 8, 65) - decode_attention_bytes(model, 8, 64);
  CHECK(inside == Approx(8 * 36.0 * 2048));
}

TEST_CASE("recurrent layers read their state once per sequence, whatever the context",
          "[hardware][arch]") {
  const RooflineModel model(shipped_model("qwen3-next-80b-a3b"), shipped_hardware("h200"), {});
  const double per_token =
      decode_attention_bytes(model, 2, 10001) - decode_attention_bytes(model, 2, 10000);
  // Only the 12 full-attention layers grow: 2 KV heads x 256 x 2 x 2 B each.
  CHECK(per_token == Approx(2 * 12.0 * 2048));
  // The state: 36 layers x 32 x 128 x 128 elements, read and written in 16 bits, per sequence.
  const double one = decode_attention_bytes(model, 1, 100);
  const double two = decode_attention_bytes(model, 2, 100);
  CHECK(two - one >= 36.0 * 32 * 128 * 128 * 2 * 2);
}

TEST_CASE("shared experts and dense first layers are priced, quantized weights with scales",
          "[hardware][arch]") {
  RooflineOptions o;
  o.weight_dtype = DType::FP8;
  o.parallelism = {8, 1};
  const ModelSpec m = shipped_model("deepseek-v3");
  const RooflineModel model(m, shipped_hardware("h200"), o);
  // At one decode token, the MLP weights streamed: 58 MoE layers x (8 routed + 1 shared) experts
  // of 3 x 7,168 x 256 (2,048 / TP 8) plus 3 dense layers of 3 x 7,168 x 2,304, fp8 with block
  // scales (up and down together).
  const IterationCost c = model.estimate(decodes(1, 1000));
  const double weights = c.at(OperatorKind::MlpUp).bytes + c.at(OperatorKind::MlpDown).bytes;
  const double b = 1 + 4.0 / 16384;
  CHECK(weights >= (58.0 * 9 * 3 * 7168 * 256 + 3.0 * 3 * 7168 * 2304) * b);
  CHECK(weights < (58.0 * 9 * 3 * 7168 * 256 + 3.0 * 3 * 7168 * 2304) * b * 1.01);
}
