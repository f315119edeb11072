"""`pip install .` into a fresh virtual environment, checked (ctest: python_pip_install).

usage: install_check.py SOURCE_DIR CMAKE_BUILD_DIR VENV_DIR

The environment is made with --system-site-packages, so that Debian's numpy, pandas, setuptools
and wheel serve the build and the module without downloads; the install reuses CMAKE_BUILD_DIR
(SERVESIM_CMAKE_BUILD_DIR) rather than building the library a second time. Each check prints
what it found when it fails.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

DATA_FOLDERS = ("models", "hw_profiles", "engines", "workloads")
PROBE = """
import json, servesim
result = servesim.run(num_requests=60, seed=3)
print(json.dumps({"file": servesim.__file__, "data_dir": servesim.data_dir(),
                  "summary": result.summary}))
"""
SITE = "import sysconfig; print(sysconfig.get_paths()['platlib'])"


def run(command, **kwargs):
    completed = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if completed.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, command))} exited {completed.returncode}\n"
                 f"{completed.stdout}{completed.stderr}")
    return completed.stdout


def probe(python, cwd, environment):
    return json.loads(run([python, "-c", PROBE], cwd=cwd, env=environment).splitlines()[-1])


def files_under(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def main():
    source, build, venv = (pathlib.Path(a).resolve() for a in sys.argv[1:4])
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("PYTHONPATH", "SERVESIM_DATA_DIR", "PYTHONHOME")}
    run([sys.executable, "-m", "venv", "--clear", "--system-site-packages", str(venv)])
    python = str(venv / "bin" / "python")
    with tempfile.TemporaryDirectory() as elsewhere:
        run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", str(source)],
            cwd=elsewhere, env=dict(environment, SERVESIM_CMAKE_BUILD_DIR=str(build)))

        installed = probe(python, elsewhere, environment)
        site = pathlib.Path(run([python, "-c", SITE]).strip())
        share = venv / "share" / "servesim"
        assert pathlib.Path(installed["file"]).parent == site, (
            f"FAIL: the module was imported from {installed['file']}, not from {site}")
        assert pathlib.Path(installed["data_dir"]) == share, (
            f"FAIL: the installed module reads its data from {installed['data_dir']}, not {share}")
        for folder in DATA_FOLDERS:
            expected, got = files_under(source / folder), files_under(share / folder)
            assert expected == got, f"FAIL: {share / folder} holds {got}, the checkout {expected}"

        # The same run as the module built in the checkout, read from the checkout's data.
        built = probe(sys.executable, elsewhere,
                      dict(environment, PYTHONPATH=str(build / "python")))
        assert pathlib.Path(built["data_dir"]) == source, built["data_dir"]
        assert installed["summary"] == built["summary"], (
            "FAIL: the installed module's run differs from the checkout module's")

        # $SERVESIM_DATA_DIR still wins over the installed copy.
        chosen = probe(python, elsewhere, dict(environment, SERVESIM_DATA_DIR=str(source)))
        assert pathlib.Path(chosen["data_dir"]) == source, chosen["data_dir"]

        run([python, "-m", "pip", "uninstall", "-y", "servesim"], cwd=elsewhere, env=environment)
        assert not pathlib.Path(installed["file"]).exists(), "FAIL: uninstall left the module"
        assert not (share / "models").exists(), "FAIL: uninstall left share/servesim/models"
    print(f"pip install . : module in {site}, data in {share}; same run as the checkout's; "
          "uninstalled cleanly")


if __name__ == "__main__":
    main()
