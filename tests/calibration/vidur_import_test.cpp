#include <catch2/catch.hpp>

#include "sim/calibration/measurement_sources.h"
#include "sim/calibration/vidur_import.h"
#include "sim/core/error.h"
#include "tests/support/test_support.h"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

// A vidur mlp.csv with the columns the importer reads, one row per (tokens, tp, median_ms).
std::string mlp_csv(const std::vector<std::tuple<int, int, std::string>>& rows,
                    const std::string& drop_column = "") {
  std::vector<std::string> header;
  for (const char* op : {"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"}) {
    for (const char* stat : {"min", "max", "median"})
      header.push_back(std::string("time_stats.") + op + "." + stat);
  }
  for (const char* c : {"n_head", "n_kv_head", "n_embd", "n_expanded_embd", "use_gated_mlp",
                        "num_tokens", "num_tensor_parallel_workers"})
    header.emplace_back(c);
  std::string text;
  for (const auto& h : header) {
    if (h != drop_column) text += (text.empty() ? "" : ",") + h;
  }
  text += "\n";
  for (const auto& [tokens, tp, median] : rows) {
    std::string line;
    for (const auto& h : header) {
      if (h == drop_column) continue;
      std::string value;
      if (h.ends_with(".min"))
        value = "0.5";
      else if (h.ends_with(".max"))
        value = "3.0";
      else if (h.ends_with(".median"))
        value = median;
      else if (h == "n_head")
        value = "64";
      else if (h == "n_kv_head")
        value = "8";
      else if (h == "n_embd")
        value = "8192";
      else if (h == "n_expanded_embd")
        value = "28672";
      else if (h == "use_gated_mlp")
        value = "True";
      else if (h == "num_tokens")
        value = std::to_string(tokens);
      else
        value = std::to_string(tp);
      line += (line.empty() ? "" : ",") + value;
    }
    text += line + "\n";
  }
  return text;
}

}  // namespace

TEST_CASE("vidur mlp.csv rows become one GEMM record per projection with sharded shapes",
          "[calibration]") {
  const test::ScratchDir dir("vidur_mlp");
  std::filesystem::create_directories(dir.path() / "compute/a100/meta-llama/Llama-2-70b-hf");
  const auto path = dir.write("compute/a100/meta-llama/Llama-2-70b-hf/mlp.csv",
                              mlp_csv({{128, 4, "1.5"}, {1, 8, "0.25"}}));
  REQUIRE(is_vidur_csv(path));
  const auto records = import_vidur_csv(path, "a100");
  REQUIRE(records.size() == 8);
  // TP 4 of 64 heads (8 KV heads), d 8192, gated MLP 28672: head_dim 128.
  const Measurement& qkv = records[0];
  CHECK(qkv.class_name() == "gemm.qkv");
  CHECK(qkv.model == "meta-llama/Llama-2-70b-hf");
  CHECK(qkv.device_name == "a100");
  CHECK(qkv.tp == 4);
  CHECK(qkv.m == 128);
  CHECK(qkv.k == 8192);
  CHECK(qkv.n == (16 + 2 * 2) * 128);
  CHECK(qkv.median_s == Approx(1.5e-3));  // milliseconds to seconds
  CHECK(*qkv.min_s == Approx(0.5e-3));
  CHECK(qkv.where.ends_with("mlp.csv:2"));
  CHECK(records[1].class_name() == "gemm.o");
  CHECK(records[1].n == 8192);
  CHECK(records[1].k == 16 * 128);
  CHECK(records[2].n == 2 * 28672 / 4);
  CHECK(records[3].k == 28672 / 4);
  CHECK(records[3].n == 8192);
  // TP 8 = KV heads: one KV head per GPU.
  CHECK(records[4].n == (8 + 2 * 1) * 128);
  CHECK(records[4].where.ends_with("mlp.csv:3"));

  const auto loaded = load_measurements({dir.path()});
  CHECK(loaded.records.size() == 8);
  CHECK(loaded.records[0].device_name == "a100");  // from the path
  REQUIRE(loaded.files.size() == 1);
}

TEST_CASE("bad vidur tables are refused naming the file, the line and the column",
          "[calibration]") {
  const test::ScratchDir dir("vidur_bad");
  CHECK_THROWS_WITH(import_vidur_csv(dir.write("e.csv", ""), "a100"),
                    Contains("e.csv") && Contains("empty"));
  CHECK_THROWS_WITH(
      import_vidur_csv(dir.write("m.csv", mlp_csv({{1, 1, "0.1"}}, "num_tokens")), "a100"),
      Contains("m.csv:1") && Contains("missing column \"num_tokens\""));
  CHECK_THROWS_WITH(
      import_vidur_csv(dir.write("u.csv", mlp_csv({{1, 1, "0.1"}, {2, 1, "2ms"}})), "a100"),
      Contains("u.csv:3") && Contains("time_stats.attn_pre_proj.median") && Contains("\"2ms\""));
  CHECK_THROWS_WITH(import_vidur_csv(dir.write("z.csv", mlp_csv({{1, 1, "0"}})), "a100"),
                    Contains("z.csv:2") && Contains("positive time"));
  CHECK_THROWS_WITH(import_vidur_csv(dir.write("h.csv", mlp_csv({})), "a100"),
                    Contains("h.csv") && Contains("no data rows"));
  CHECK_THROWS_WITH(import_vidur_csv(dir.write("x.csv", "a,b\n1,2\n"), "a100"),
                    Contains("x.csv:1") && Contains("not a vidur profile table"));
  CHECK_THROWS_WITH(import_vidur_csv(dir.write("t.csv", mlp_csv({{1, 3, "0.1"}})), "a100"),
                    Contains("t.csv:2") && Contains("does not divide"));
}

TEST_CASE("vidur attention, all-reduce and CPU-overhead tables import", "[calibration]") {
  const test::ScratchDir dir("vidur_other");
  const std::string attention_header =
      "time_stats.attn_decode.min,time_stats.attn_decode.max,time_stats.attn_decode.median,"
      "time_stats.attn_prefill.min,time_stats.attn_prefill.max,time_stats.attn_prefill.median,"
      "n_embd,n_q_head,n_kv_head,block_size,num_tensor_parallel_workers,batch_size,"
      "prefill_chunk_size,kv_cache_size,is_prefill\n";
  const auto attention = import_vidur_csv(
      dir.write("attention.csv", attention_header +
                                     "0.01,0.02,0.015,,,,8192,64,8,16,2,4,0,512,False\n"
                                     "0.01,0.02,0.016,,,,8192,64,8,16,2,4,0,512,False\n"
                                     ",,,0.1,0.3,0.2,8192,64,8,16,2,1,256,128,True\n"),
      "a100");
  REQUIRE(attention.size() == 2);  // the duplicate decode shape keeps its first row
  CHECK(attention[0].kind == MeasurementKind::DecodeAttention);
  CHECK(attention[0].median_s == Approx(15e-6));
  CHECK(attention[0].num_heads == 32);
  CHECK(attention[0].num_kv_heads == 4);
  CHECK(attention[0].head_dim == 128);
  CHECK(attention[0].batch == 4);
  CHECK(attention[0].context_tokens == 512);
  CHECK(attention[1].kind == MeasurementKind::PrefillAttention);
  CHECK(attention[1].chunk_tokens == 256);
  CHECK(attention[1].context_tokens == 128);

  const auto all_reduce = import_vidur_csv(
      dir.write("all_reduce.csv",
                ",time_stats.all_reduce.min,time_stats.all_reduce.max,time_stats.all_reduce."
                "median,rank,num_workers,size,devices_per_node\n"
                "0,0.03,0.07,0.04,0,2,2048,1\n"
                "1,0.03,0.07,0.05,0,4,4096,8\n"),
      "a100");
  REQUIRE(all_reduce.size() == 1);  // the row spanning nodes is skipped
  CHECK(all_reduce[0].ranks == 4);
  CHECK(all_reduce[0].size_bytes == 4096);
  CHECK(all_reduce[0].median_s == Approx(5e-5));

  const auto host = import_vidur_csv(
      dir.write("cpu_overheads.csv",
                ",schedule_median,sampler_e2e_median,prepare_inputs_e2e_median,"
                "process_model_outputs_median,model_name,batch_size,tensor_parallel_degree\n"
                "0,0.1,0.2,0.3,0.4,org/m,8,1\n"),
      "a100");
  REQUIRE(host.size() == 1);
  CHECK(host[0].kind == MeasurementKind::HostOverhead);
  CHECK(host[0].median_s == Approx(1e-3));
  CHECK(host[0].batch == 8);
  CHECK(host[0].model == "org/m");
}
