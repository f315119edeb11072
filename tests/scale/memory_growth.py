"""A run's memory must not grow with its requests (issue 32): ten times the requests, with
and without --out, may not double the peak resident memory. Usage: memory_growth.py SERVESIM."""
import os
import subprocess
import sys
import tempfile


def peak_mib(servesim, requests, out_dir):
    """Peak resident memory (MiB) of one `servesim run` of `requests` sharegpt requests."""
    args = [servesim, "run", "--replicas", "16", "--rate", "400", "--num-requests", str(requests)]
    if out_dir is not None:
        args += ["--out", out_dir, "--no-plots"]
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    stderr = child.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"servesim run --num-requests {requests} failed: {stderr}")
    return usage.ru_maxrss / 1024  # kB on Linux


def main():
    servesim = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        for out in (False, True):
            peaks = {}
            for requests in (20_000, 200_000):
                out_dir = os.path.join(scratch, f"out_{requests}") if out else None
                peaks[requests] = peak_mib(servesim, requests, out_dir)
            ratio = peaks[200_000] / peaks[20_000]
            label = "with --out" if out else "without --out"
            print(f"{label}: 20,000 requests {peaks[20_000]:.1f} MiB, "
                  f"200,000 {peaks[200_000]:.1f} MiB, ratio {ratio:.2f}")
            if ratio >= 2:
                failures.append(f"{label}: 10x the requests took {ratio:.2f}x the memory")
    if failures:
        sys.exit("; ".join(failures))


if __name__ == "__main__":
    main()
