"""servesim.kv and servesim.roofline equal `servesim kv --json` and `servesim roofline --json`."""

import math

import pytest

import servesim
from conftest import cli_error


def test_kv_with_hardware_equals_the_cli(cli_json):
    expected = cli_json("kv", "--model", "llama-3-70b", "--hw", "h100-sxm", "--tp", "4",
                        "--kv-dtype", "fp8", "--tokens", "8192", "--max-len", "8192")
    assert servesim.kv("llama-3-70b", "h100-sxm", tp=4, kv_dtype="fp8", tokens=8192,
                       max_len=8192) == expected
    assert expected["kv_capacity_tokens"] > 0


def test_kv_of_raw_dimensions_equals_the_cli(cli_json):
    expected = cli_json("kv", "--layers", "32", "--d-model", "4096", "--tokens", "8192",
                        "--kv-group", "8")
    result = servesim.kv(layers=32, d_model=4096, tokens=8192, kv_group=8)
    assert result == expected
    assert result["kv_bytes"] == 536870912


def test_kv_refuses_a_bad_fraction():
    with pytest.raises(servesim.InputError, match="memory.mem_util.*expected a fraction in"):
        servesim.kv("llama-3-8b", "h100-sxm", mem_util=1.5)


def operators_as_records(document):
    """The frame's rows as the CLI's operator objects: a GEMM has a `kernel`, other operators
    none (NaN in the frame)."""
    document = dict(document)
    document["operators"] = [
        {key: value for key, value in row.items()
         if not (isinstance(value, float) and math.isnan(value))}
        for row in document["operators"].to_dict("records")]
    return document


def test_roofline_equals_the_cli(cli_json):
    expected = cli_json("roofline", "--model", "llama-2-70b", "--hw", "a100-80gb", "--tp", "4",
                        "--decode-batch", "64")
    result = servesim.roofline("llama-2-70b", "a100-80gb", tp=4, decode_batch=64)
    assert list(result["operators"]["name"])[:2] == ["qkv_proj", "attention_decode"]
    assert operators_as_records(result) == expected


def test_roofline_chunk_and_generation_equal_the_cli(cli_json):
    chunk = cli_json("roofline", "--prefill-tokens", "512", "--prefill-context", "1536")
    assert operators_as_records(servesim.roofline(prefill_tokens=512,
                                                  prefill_context=1536)) == chunk
    generation = cli_json("roofline", "--generate", "1000", "--prefill-tokens", "100")
    assert servesim.roofline(generate=1000, prefill_tokens=100) == generation


def test_roofline_unknown_hardware_raises_the_cli_message(cli):
    code, message = cli_error(cli, "roofline", "--hw", "h100-sxn")
    with pytest.raises(servesim.InputError) as caught:
        servesim.roofline(hardware="h100-sxn")
    # The CLI names its flag, the module its argument; the rest is the same line.
    assert message.startswith("--hw: unknown hardware profile \"h100-sxn\"")
    assert str(caught.value) == "hardware" + message[len("--hw"):]
    assert caught.value.exit_code == code == 3


def test_calculators_name_a_misspelt_keyword_and_a_wrong_value():
    with pytest.raises(servesim.UsageError, match='kv\\(\\): unknown keyword "tokenz": did you mean "tokens"'):
        servesim.kv("llama-3-8b", tokenz=5)
    with pytest.raises(servesim.UsageError, match="roofline\\(\\): arguments of the wrong type.*decode_batch='x'"):
        servesim.roofline("llama-3-8b", decode_batch="x")
    with pytest.raises(servesim.UsageError, match='roofline\\(\\): unknown keyword "hw"; expected roofline\\(model'):
        servesim.roofline("llama-3-8b", hw="h100-sxm")


@pytest.mark.parametrize("flags, keywords", [
    (["--engine", "vllm-0.10", "--decode-batch", "16"], {"engine": "vllm-0.10", "decode_batch": 16}),
    (["--speculative", "3", "--decode-batch", "8"], {"speculative": 3, "decode_batch": 8}),
    (["--model", "qwen3-30b-a3b", "--tp", "2", "--dp", "2", "--enable-expert-parallel",
      "--expert-load-imbalance", "1.3", "--decode-batch", "64"],
     {"model": "qwen3-30b-a3b", "tp": 2, "dp": 2, "expert_parallel": True,
      "expert_load_imbalance": 1.3, "decode_batch": 64}),
])
def test_roofline_takes_the_cli_options(cli_json, flags, keywords):
    expected = cli_json("roofline", *flags)
    result = servesim.roofline(**keywords)
    assert operators_as_records(result) == expected
