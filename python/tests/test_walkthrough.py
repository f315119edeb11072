"""docs/python.md's walkthrough, run cell by cell as a notebook would run it: the figures it
writes exist, and what its prose says of the answers holds."""

import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def walkthrough_cells():
    text = DOC.read_text()
    match = re.search(r"<!-- walkthrough: start -->(.*?)<!-- walkthrough: end -->", text, re.S)
    assert match, f"{DOC}: no walkthrough between its start and end markers"
    cells = re.findall(r"```python\n(.*?)```", match.group(1), re.S)
    assert len(cells) >= 4, f"{DOC}: the walkthrough has {len(cells)} python cells"
    return cells


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    pytest.importorskip("matplotlib", reason="the walkthrough plots with matplotlib "
                        "(apt-get install python3-matplotlib; the README's set-up installs it)")
    folder = tmp_path_factory.mktemp("walkthrough")
    namespace = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for number, cell in enumerate(walkthrough_cells(), start=1):
            try:
                exec(compile(cell, f"{DOC.name}, walkthrough cell {number}", "exec"), namespace)
            except Exception as error:  # name the cell that broke
                pytest.fail(f"walkthrough cell {number} raised {error!r}:\n{cell}")
    return folder, namespace


def test_every_figure_is_written(session):
    folder, _ = session
    for name in ("ttft_histogram.png", "ttft_p99_vs_throughput.png", "fleet_cost.png"):
        path = folder / name
        assert path.is_file(), f"the walkthrough did not write {name}"
        assert path.read_bytes()[:8] == PNG_MAGIC and path.stat().st_size > 5000, name


def test_the_run_and_the_sweep(session):
    _, ns = session
    assert len(ns["run"].requests) == 2000
    assert len(ns["served"]) == 2000 - ns["run"].summary["requests_rejected"]
    curves = ns["curves"]
    assert list(curves["scheduler"].unique()) == ["vllm", "sarathi"]
    assert sorted(curves["rate"].unique()) == [8, 16, 32, 48, 64]
    by = curves.set_index(["scheduler", "rate"])
    for scheduler in ("vllm", "sarathi"):
        # Throughput follows the rate while the H100 keeps up, then flattens, and TTFT leaves
        # milliseconds for seconds.
        assert by.loc[(scheduler, 8), "throughput_requests_per_s"] > 7.5
        assert by.loc[(scheduler, 16), "ttft_s.p99"] < 0.1
        assert by.loc[(scheduler, 64), "ttft_s.p99"] > 1.0
        assert (by.loc[(scheduler, 64), "throughput_requests_per_s"]
                < 1.15 * by.loc[(scheduler, 48), "throughput_requests_per_s"])
    # Chunked prefill holds the higher throughput at saturation and the lower p99 TPOT.
    assert (by.loc[("sarathi", 64), "throughput_requests_per_s"]
            > by.loc[("vllm", 64), "throughput_requests_per_s"])
    for rate in (8, 16, 32, 48, 64):
        assert by.loc[("sarathi", rate), "tpot_s.p99"] < by.loc[("vllm", rate), "tpot_s.p99"]


def test_capacity_and_its_price(session):
    _, ns = session
    answer = ns["answer"]
    assert answer["outcome"] == "found"
    assert 8 < answer["rate_per_s"] < 100
    assert answer["usd_per_hour"] == pytest.approx(answer["gpus"] * answer["usd_per_gpu_hour"])
    assert answer["usd_per_million_output_tokens"] > 0


def test_the_fleet_the_prose_describes(session):
    _, ns = session
    shapes = ns["shapes"]
    assert {h: int(shapes.loc[h, "replicas"]) for h in shapes.index} == {
        "h100-sxm": 1, "a100-80gb": 2, "l40s": 2}
    assert ns["cheapest"] == "h100-sxm"
    failed = ns["fleet"]["points"]
    assert not failed[(failed["hardware"] == "a100-80gb") & (failed["replicas"] == 1)]["met"].any()
