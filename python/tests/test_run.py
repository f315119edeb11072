"""servesim.run against the CLI: the same configuration gives the same requests.csv,
iterations.csv, summary.json and resolved_config.json, built in memory."""

import json

import numpy as np
import pandas as pd
import pytest

import servesim
from conftest import SMALL, SMALL_FLAGS, cli_error


def read_requests_csv(path):
    # reject_reason is text: keep_default_na=False reads an empty cell as "", as the module
    # gives None; the number columns read empty cells as NaN either way.
    frame = pd.read_csv(path, float_precision="round_trip", keep_default_na=False, na_values={
        c: [""] for c in ("first_scheduled_s", "first_token_s", "completion_s", "ttft_s",
                          "tpot_s", "e2e_s")})
    frame["reject_reason"] = frame["reject_reason"].replace("", None).astype(object)
    return frame


def cli_run(cli, tmp_path, *flags):
    out = tmp_path / "out"
    code, _, err = cli("run", *flags, "--out", str(out), "--no-plots")
    assert code == 0, err
    return out


def assert_same_frame(module_frame, file_frame):
    assert list(module_frame.columns) == list(file_frame.columns)
    assert len(module_frame) == len(file_frame) > 0
    for name in module_frame.columns:
        mine, theirs = module_frame[name], file_frame[name]
        if mine.dtype == object:
            assert mine.tolist() == [None if v is None or v != v else v for v in theirs], name
        else:
            # A double column whose every value is whole reads back from the file as integers.
            whole = mine.dtype == np.float64 and theirs.dtype == np.int64
            assert mine.dtype == theirs.dtype or whole, name
            # Exact: the file holds every double in a form that reads back as itself.
            np.testing.assert_array_equal(mine.to_numpy(), theirs.to_numpy(), err_msg=name)


def test_requests_and_iterations_equal_the_cli_files(cli, tmp_path):
    out = cli_run(cli, tmp_path, *SMALL_FLAGS)
    result = servesim.run(**SMALL)
    assert_same_frame(result.requests, read_requests_csv(out / "requests.csv"))
    assert_same_frame(result.iterations, pd.read_csv(out / "iterations.csv", float_precision="round_trip"))
    assert result.summary == json.loads((out / "summary.json").read_text())
    assert result.resolved_config == json.loads((out / "resolved_config.json").read_text())
    assert result.requests["id"].is_monotonic_increasing
    assert result.summary["requests_completed"] == 200


def test_a_disaggregated_run_equals_the_cli_files_with_its_ttft_parts(cli, tmp_path):
    out = cli_run(cli, tmp_path, *SMALL_FLAGS, "--disaggregation", "1p1d")
    result = servesim.run(**SMALL, disaggregation="1p1d")
    assert_same_frame(result.requests, read_requests_csv(out / "requests.csv"))
    assert result.summary == json.loads((out / "summary.json").read_text())
    parts = [c for c in result.requests.columns if c.startswith("ttft_") and c != "ttft_s"]
    assert len(parts) == 6
    assert np.allclose(result.requests[parts].sum(axis=1), result.requests["ttft_s"], atol=1e-8)
    assert result.summary["kv_transfer"]["transfers"] == 200


def test_rejected_requests_have_empty_cells_and_a_reason(cli, tmp_path):
    # sharegpt's prompts average 161 tokens: many exceed a maximum length of 256 on their own,
    # and such a request is rejected whatever the policy for outputs cut at the maximum.
    out = cli_run(cli, tmp_path, "--max-len", "256", "--num-requests", "100", "--rate", "5")
    result = servesim.run(max_len=256, num_requests=100, rate=5)
    assert_same_frame(result.requests, read_requests_csv(out / "requests.csv"))
    rejected = result.requests[result.requests["rejected"] == 1]
    served = result.requests[result.requests["rejected"] == 0]
    assert len(rejected) > 0 and len(served) > 0
    assert rejected["ttft_s"].isna().all() and rejected["completion_s"].isna().all()
    assert rejected["reject_reason"].map(lambda r: isinstance(r, str) and r != "").all()
    assert served["reject_reason"].map(lambda r: r is None).all()
    assert served["ttft_s"].notna().all()
    assert sum(result.rejections.values()) == len(rejected)


def test_config_dict_and_keywords_are_the_cli_flags(cli, tmp_path):
    # A configuration dict is merged like --config FILE, keywords like flags and --set.
    config = {"scheduler": {"name": "sarathi", "token_budget": 256}, "seed": 7}
    path = tmp_path / "study.json"
    path.write_text(json.dumps(config))
    out = cli_run(cli, tmp_path, "--config", str(path), "--num-requests", "100", "--rate",
                  "10", "--set", "workload.arrival.process=gamma", "--set",
                  "workload.arrival.cv=3")
    settings = {"num_requests": 100, "rate": 10, "workload.arrival.process": "gamma",
                "workload.arrival.cv": 3}
    from_dict = servesim.run(config, **settings)
    from_file = servesim.run(str(path), **settings)
    expected = json.loads((out / "summary.json").read_text())
    assert from_dict.summary == expected
    assert from_file.summary == expected
    assert from_dict.resolved_config["scheduler"]["token_budget"] == 256
    assert from_dict.resolved_config["workload"]["arrival"]["cv"] == 3
    # The resolved configuration repeats the run.
    assert servesim.run(from_dict.resolved_config).summary == expected


def test_vllm_names_give_the_same_run():
    a = servesim.run(model="llama-2-13b", tp=2, max_len=2048, **SMALL)
    b = servesim.run(model="llama-2-13b", tensor_parallel_size=2, max_model_len=2048, **SMALL)
    assert a.summary == b.summary
    assert a.resolved_config["tp"] == 2


def test_same_seed_same_output_other_seed_other_arrivals():
    first = servesim.run(**SMALL)
    again = servesim.run(**SMALL)
    pd.testing.assert_frame_equal(first.requests, again.requests)
    pd.testing.assert_frame_equal(first.iterations, again.iterations)
    assert first.summary == again.summary
    other = servesim.run(**{**SMALL, "seed": 8})
    assert not np.array_equal(first.requests["arrival_s"], other.requests["arrival_s"])


def test_records_off_gives_no_frames():
    result = servesim.run(**SMALL, **{"output.request_records": False,
                                      "output.iteration_records": False})
    assert result.requests is None and result.iterations is None
    assert result.summary == servesim.run(**SMALL).summary


def test_unknown_model_raises_the_cli_message(cli):
    code, message = cli_error(cli, "run", "--model", "no-such-model")
    with pytest.raises(servesim.Error) as caught:
        servesim.run(model="no-such-model")
    assert isinstance(caught.value, servesim.InputError)
    assert str(caught.value) == message
    assert "no-such-model" in message
    assert caught.value.exit_code == code == 3
    assert caught.value.kind == "input"


def test_infeasible_model_raises_infeasible_error(cli):
    code, message = cli_error(cli, "run", "--model", "llama-3-70b", "--hw", "a100-40gb")
    with pytest.raises(servesim.InfeasibleError) as caught:
        servesim.run(model="llama-3-70b", hw="a100-40gb")
    assert str(caught.value) == message
    assert caught.value.exit_code == code == 4


def test_bad_settings_raise_usage_errors():
    with pytest.raises(servesim.UsageError, match="^prompt_tokens and output_tokens go together"):
        servesim.run(prompt_tokens=100)
    with pytest.raises(servesim.UsageError,
                       match="^tp and tensor_parallel_size are the same setting; give one$"):
        servesim.run(tp=1, tensor_parallel_size=1)
    with pytest.raises(servesim.UsageError, match="^num_requests: expected an integer"):
        servesim.run(num_requests="many")
    with pytest.raises(servesim.UsageError, match="^config: expected a dict, a path or None"):
        servesim.run(42)


def test_unknown_key_raises_input_error(cli):
    code, message = cli_error(cli, "run", "--set", "scheduler.batch_size=4")
    with pytest.raises(servesim.InputError) as caught:
        servesim.run(**{"scheduler.batch_size": 4})
    assert str(caught.value) == message
    assert caught.value.exit_code == code == 3
