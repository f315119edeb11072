"""Fixtures shared by the servesim module's tests: the CLI built beside the module, and a
small run every test can afford (200 requests of Llama-3-8B on one H100)."""

import json
import os
import pathlib
import subprocess

import pytest

import servesim

# Small enough that a run takes milliseconds, large enough to queue and batch.
SMALL = {"num_requests": 200, "rate": 20, "seed": 7}
# The same settings as command-line flags.
SMALL_FLAGS = ["--num-requests", "200", "--rate", "20", "--seed", "7"]


def cli_path():
    given = os.environ.get("SERVESIM_CLI")
    if given:
        return pathlib.Path(given)
    # Run by hand: the CLI of the build the module was imported from.
    return pathlib.Path(servesim.__file__).resolve().parent.parent / "sim" / "servesim"


@pytest.fixture(scope="session")
def cli():
    """Runs `servesim ARGS...`: returns (exit code, stdout, stderr)."""
    path = cli_path()
    if not path.exists():
        pytest.skip(f"the servesim CLI is not built at {path}")

    def run(*args, cwd=None):
        done = subprocess.run([str(path), *args], capture_output=True, text=True, cwd=cwd,
                              timeout=120)
        return done.returncode, done.stdout, done.stderr

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    """Runs `servesim ARGS... --json` and returns its document."""

    def run(*args):
        code, out, err = cli(*args, "--json")
        assert code == 0, err
        return json.loads(out)

    return run


def cli_error(cli, *args):
    """The CLI's exit code and its one error line without the "servesim: error: " prefix."""
    code, _, err = cli(*args)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    prefix = "servesim: error: "
    assert lines[0].startswith(prefix), err
    return code, lines[0][len(prefix):]
