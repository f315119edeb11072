"""servesim.sweep and servesim.capacity against the CLI's sweep and capacity."""

import numpy as np
import pandas as pd
import pytest

import servesim


def test_sweep_equals_the_cli_sweep_csv(cli, tmp_path):
    out = tmp_path / "sweep"
    code, _, err = cli("sweep", "--grid", "rate=4,16", "--grid", "scheduler=vllm,orca",
                       "--num-requests", "150", "--seed", "5", "--out", str(out), "--no-plots")
    assert code == 0, err
    expected = pd.read_csv(out / "sweep.csv", float_precision="round_trip")
    frame = servesim.sweep(grid={"rate": [4, 16], "scheduler": ["vllm", "orca"]},
                           num_requests=150, seed=5)
    assert list(frame.columns) == list(expected.columns)
    assert frame["point"].tolist() == [0, 1, 2, 3]
    assert frame["scheduler"].tolist() == ["vllm", "orca", "vllm", "orca"]
    assert frame["rate"].tolist() == [4, 4, 16, 16]
    for name in frame.columns[3:]:
        np.testing.assert_array_equal(frame[name].to_numpy(dtype=float),
                                      expected[name].to_numpy(dtype=float), err_msg=name)


def test_sweep_point_that_does_not_fit_is_a_row():
    frame = servesim.sweep(grid={"tp": [1, 4]}, model="llama-3-70b", num_requests=50)
    assert frame["does_not_fit"].isna().tolist() == [False, True]
    assert "does not fit on H100-SXM at TP 1" in frame["does_not_fit"][0]
    assert np.isnan(frame["throughput_requests_per_s"][0])
    assert frame["throughput_requests_per_s"][1] > 0


def test_sweep_takes_flag_names_with_underscores():
    frame = servesim.sweep(grid={"num_requests": [50, 100]}, rate=10)
    assert frame["requests_completed"].tolist() == [50, 100]


def test_capacity_rate_equals_the_cli(cli_json):
    flags = ["--num-requests", "300", "--seed", "2", "--slo", "ttft_p99=0.2", "--slo",
             "tpot_p99=0.03", "--precision", "0.1"]
    expected = cli_json("capacity", *flags)
    result = servesim.capacity(slo={"ttft_p99": 0.2, "tpot_p99": 0.03}, precision=0.1,
                               num_requests=300, seed=2)
    assert result["mode"] == "rate"
    assert result["outcome"] == expected["outcome"] == "found"
    assert result["rate_per_s"] == expected["rate_per_s"]
    assert result["failing_rate_per_s"] == expected["failing_rate_per_s"]
    assert result["slo"] == expected["slo"]
    points = result["points"]
    assert points["rate_per_s"].tolist() == [p["rate_per_s"] for p in expected["points"]]
    assert points["met"].tolist() == [p["verdict"]["met"] for p in expected["points"]]
    assert points["ttft_s.p99"].tolist() == [p["summary"]["ttft_s"]["p99"]
                                              for p in expected["points"]]
    answer = next(p for p in expected["points"] if p["rate_per_s"] == expected["rate_per_s"])
    assert result["ttft_p99_s"] == answer["summary"]["ttft_s"]["p99"]
    assert result["tpot_p99_s"] == answer["summary"]["tpot_s"]["p99"]


def test_capacity_replicas_equals_the_cli(cli_json):
    # 2,000 requests: at 1,000 one A100 pair is still filling up when the run ends (undecided).
    flags = ["--num-requests", "2000", "--slo", "ttft_p99=0.5", "--target-rate", "30",
             "--shapes", "h100-sxm:1,a100-80gb:2"]
    expected = cli_json("capacity", *flags)
    result = servesim.capacity(slo=["ttft_p99=0.5"], target_rate=30,
                               shapes=["h100-sxm:1", ("a100-80gb", 2)], num_requests=2000)
    assert result["mode"] == "replicas"
    shapes = result["shapes"]

    def counts(column):
        return [None if pd.isna(x) else int(x) for x in shapes[column]]

    assert shapes["hardware"].tolist() == [s["hardware"] for s in expected["shapes"]]
    assert counts("replicas") == [s["replicas"] for s in expected["shapes"]]
    assert counts("gpus") == [s.get("gpus") for s in expected["shapes"]]
    assert all(r is not None for r in counts("replicas"))
    replicas_tried = [p["replicas"] for s in expected["shapes"] for p in s["points"]]
    assert result["points"]["replicas"].tolist() == replicas_tried
    # The latencies at each answer, as the CLI's answer table shows them.
    for i, shape in enumerate(expected["shapes"]):
        answer = next(p for p in shape["points"] if p["replicas"] == shape["replicas"])
        assert shapes["ttft_p99_s"][i] == answer["summary"]["ttft_s"]["p99"]
        assert shapes["tpot_p99_s"][i] == answer["summary"]["tpot_s"]["p99"]
        # ... and their error bands, as summary.json carries them.
        bands = shape["error_bands"]
        for metric in ("ttft", "tpot"):
            for edge in ("low", "high"):
                column = shapes[f"{metric}_band_{edge}"][i]
                if metric in bands:
                    assert column == bands[metric][edge]
                else:
                    assert pd.isna(column)
    assert not pd.isna(shapes["ttft_band_high"][0])  # vLLM on Hopper has a calibration


def test_capacity_plans_at_the_bands_upper_edge_as_the_cli(cli_json):
    flags = ["--num-requests", "300", "--slo", "tpot_p99=0.03", "--precision", "0.1",
             "--plan-at", "upper"]
    expected = cli_json("capacity", *flags)
    result = servesim.capacity(slo={"tpot_p99": 0.03}, precision=0.1, num_requests=300,
                               plan_at="upper")
    assert result["slo"] == expected["slo"]
    assert "latencies at their error bands' upper edge" in result["slo"]
    assert result["rate_per_s"] == expected["rate_per_s"]
    assert result["tpot_band_high"] is not None
    with pytest.raises(servesim.InputError, match="plan_at.*expected prediction or upper"):
        servesim.capacity(slo={"tpot_p99": 0.03}, plan_at="median")


def test_capacity_layouts_equal_the_cli(cli_json):
    # Llama-3-8B, ShareGPT at 60 req/s on H100s and A100s: layouts need more than one replica.
    flags = ["--target-rate", "60", "--disaggregated", "--slo", "ttft_p99=0.5", "--slo",
             "tpot_p99=0.02", "--num-requests", "2000", "--max-len", "4096", "--shapes",
             "h100-sxm:1,a100-80gb:1", "--max-replicas", "16"]
    expected = cli_json("capacity", *flags)
    result = servesim.capacity(slo=["ttft_p99=0.5", "tpot_p99=0.02"], target_rate=60,
                               disaggregated=True, shapes=["h100-sxm:1", "a100-80gb:1"],
                               num_requests=2000, max_len=4096, max_replicas=16)
    assert result["mode"] == expected["mode"] == "layouts"
    deployments = result["deployments"]
    assert deployments["kind"].tolist() == [d["kind"] for d in expected["deployments"]]
    assert deployments["deployment"].tolist() == [d["deployment"] for d in expected["deployments"]]

    def gpus(frame):
        return [None if pd.isna(x) else int(x) for x in frame["gpus"]]

    assert gpus(deployments) == [d.get("gpus") for d in expected["deployments"]]
    assert any(k == "disaggregated" and g is not None
               for k, g in zip(deployments["kind"], gpus(deployments)))
    assert result["best"] == expected["best"]
    front = result["front"]
    assert front["deployment"].tolist() == [f["deployment"] for f in expected["front"]]
    assert front["replicas"].tolist() == [f["replicas"] for f in expected["front"]]
    assert (front["output_tokens_per_s_per_gpu"].tolist() ==
            [f["output_tokens_per_s_per_gpu"] for f in expected["front"]])
    # Every point the CLI simulated, in its order.
    points = result["points"]
    assert len(points) == sum(len(d.get("points", [])) for d in expected["deployments"])
    with pytest.raises(servesim.UsageError, match="^disaggregated: give target_rate"):
        servesim.capacity(slo=["ttft_p99=0.5"], disaggregated=True)


def test_capacity_needs_an_slo():
    with pytest.raises(servesim.UsageError, match="^slo: give at least one term"):
        servesim.capacity(slo={})


def test_capacity_returns_prices():
    result = servesim.capacity(slo={"ttft_p99": 0.5}, precision=0.2, num_requests=300,
                               gpu_cost_per_hour=2.0)
    assert result["outcome"] == "found"
    rate, gpus = result["rate_per_s"], result["gpus"]
    assert result["usd_per_hour"] == 2.0 * gpus
    assert result["usd_per_thousand_requests"] == pytest.approx(
        result["usd_per_hour"] / (rate * 3.6))
    assert 0 < result["usd_per_million_tokens"] < result["usd_per_million_output_tokens"]
    assert result["usd_per_million_input_tokens"] > 0
    shapes = servesim.capacity(slo={"ttft_p99": 0.5}, target_rate=10, num_requests=300,
                               shapes=["h100-sxm:1"], gpu_cost_per_hour=2.0)["shapes"]
    assert shapes["usd_per_hour"].tolist() == [2.0 * shapes["gpus"][0]]
    assert shapes["usd_per_million_input_tokens"][0] > 0


def test_sweep_count_columns_stay_integers_beside_a_point_that_does_not_fit():
    frame = servesim.sweep(grid={"tp": [1, 4]}, model="llama-3-70b", num_requests=50)
    for name in ("requests_completed", "preemptions", "steady_state.requests_simulated"):
        assert str(frame[name].dtype) == "Int64", name
    assert frame["requests_completed"].isna().tolist() == [True, False]
    assert frame["requests_completed"][1] == 50
    # Measurements stay floats.
    assert frame["throughput_requests_per_s"].dtype == np.float64


def test_misspelt_keywords_raise_usage_errors_that_name_the_right_one():
    with pytest.raises(servesim.UsageError, match='unknown keyword "rat": did you mean "rate"'):
        servesim.run(rat=4, num_requests=10)
    with pytest.raises(servesim.UsageError, match='unknown keyword "num_request"'):
        servesim.sweep(grid={"rate": [1]}, num_request=10)
    # A configuration key (dotted or top level) is not a misspelling.
    assert servesim.run(num_requests=20, **{"workload.arrival.rate_per_s": 4}).summary


def test_wrong_arguments_raise_usage_errors_not_type_errors():
    with pytest.raises(servesim.UsageError, match=r"sweep\(\): arguments of the wrong type.*"
                                                  r"jobs='two'.*expected sweep\(config"):
        servesim.sweep(grid={"rate": [1]}, jobs="two")
    with pytest.raises(servesim.UsageError, match=r"capacity\(\): .*required one missing"):
        servesim.capacity(num_requests=10)
    assert issubclass(servesim.UsageError, servesim.Error)
