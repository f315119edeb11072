#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include "sim/hardware/impl/roofline_model.h"
#include "tests/support/test_support.h"

using namespace servesim;

namespace {

double first_cell(const std::filesystem::path& path, const std::string& column) {
  return std::stod(test::first_csv_cell(path, column));
}

}  // namespace

TEST_CASE("a run prices Mistral-7B's 8k prompt over its window, as the cost model's spans say",
          "[app][window]") {
  test::ScratchDir dir("window_run");
  const auto out = dir.path() / "out";
  const auto r =
      test::run_servesim({"run", "--model", "mistral-7b", "--prompt-tokens", "8192",
                          "--output-tokens", "1", "--num-requests", "1", "--out", out.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The vLLM engine's costs as the run assembles them (capture sizes cut at 2 x max_num_seqs).
  RooflineOptions o;
  o.engine = test::shipped_engine("vllm").costs;
  auto& sizes = o.engine.cuda_graph_capture_sizes;
  sizes.erase(std::upper_bound(sizes.begin(), sizes.end(), 2 * 1024), sizes.end());
  const RooflineModel model(test::shipped_model("mistral-7b"), test::shipped_hardware("h100-sxm"),
                            o);
  BatchShape windowed;
  windowed.spans = model.attention_spans();
  windowed.add_prefill(8192, 0);
  BatchShape full;
  full.add_prefill(8192, 0);
  const double ttft_s = first_cell(out / "requests.csv", "ttft_s");
  // The one prefill step is the first token, to the nanosecond the simulator rounds to, after
  // the engine's frontend latency.
  const double frontend_s = o.engine.host.frontend_latency_s;
  CHECK(ttft_s == Approx(frontend_s + model.estimate(windowed).total_time_s).margin(3e-9));
  CHECK(ttft_s < frontend_s + model.estimate(full).total_time_s - 1e-3);
}
