"""The module releases the GIL while it simulates: threads run simulations at the same time,
and each gives exactly what it gives alone."""

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pandas as pd

import servesim

# Long enough (a few hundred milliseconds) that the main thread has time to run beside it,
# and without records: building DataFrames runs numpy, which releases the GIL on its own.
LONG = {"num_requests": 30000, "rate": 40, "no_bulk_decode": True,
        "output.request_records": False, "output.iteration_records": False}


def test_concurrent_runs_equal_sequential_ones():
    seeds = [1, 2, 3, 4]
    settings = {"num_requests": 300, "rate": 20}
    sequential = [servesim.run(seed=s, **settings) for s in seeds]
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(lambda s: servesim.run(seed=s, **settings), seeds))
    assert len(concurrent) == len(seeds)
    for alone, together in zip(sequential, concurrent):
        assert alone.summary == together.summary
        pd.testing.assert_frame_equal(alone.requests, together.requests)
        pd.testing.assert_frame_equal(alone.iterations, together.iterations)


def test_python_runs_while_a_simulation_runs():
    # With a switch interval far longer than the simulation, a thread that held the GIL
    # through the C++ call would keep the main thread out until it returned: the main thread
    # could then observe the run unfinished no time at all. Released, the main thread runs
    # (waiting 1 ms at a time, which hands the GIL back) while the simulation computes.
    started = threading.Event()
    finished = threading.Event()
    results = []

    def simulate():
        started.set()
        results.append(servesim.run(**LONG))
        finished.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        worker = threading.Thread(target=simulate)
        worker.start()
        started.wait()
        observed_running = 0
        while not finished.wait(0.001):
            observed_running += 1
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert observed_running > 0
    assert results[0].summary == servesim.run(**LONG).summary


def test_sweep_threads_equal_one_thread():
    grid = {"rate": [5, 20], "scheduler": ["vllm", "sarathi"]}
    one = servesim.sweep(grid=grid, jobs=1, num_requests=150, seed=3)
    four = servesim.sweep(grid=grid, jobs=4, num_requests=150, seed=3)
    pd.testing.assert_frame_equal(one, four)
