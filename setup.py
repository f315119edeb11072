"""`pip install .`: the servesim module built by CMake, with the data it reads.

The extension is CMake's `servesim_python` target, built in a folder of its own (Release, no
tests, no CUDA harness) for the interpreter pip runs; $SERVESIM_CMAKE_BUILD_DIR names an
already configured build folder to build (and reuse) instead. The models, hardware and engine
profiles and workloads go to <prefix>/share/servesim, where the installed module looks first
(servesim.data_dir()). Debian's pip, setuptools and wheel suffice, without downloads:
`pip install --no-build-isolation .` (docs/python.md).
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
BUILD_BASE = pathlib.Path("build") / "pip"
DATA_FOLDERS = ("models", "hw_profiles", "engines", "workloads", "validation/setups")


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(servesim VERSION ([0-9.]+)", text)
    if match is None:
        raise SystemExit("setup.py: CMakeLists.txt: no 'project(servesim VERSION x.y.z)' line")
    return match.group(1)


def data_files():
    """(install folder, [files]) for every file under the data folders, as share/servesim/..."""
    entries = []
    for folder in DATA_FOLDERS:
        for directory, _, names in sorted(os.walk(ROOT / folder)):
            files = sorted(str(pathlib.Path(directory, n).relative_to(ROOT)) for n in names)
            if files:
                relative = pathlib.Path(directory).relative_to(ROOT)
                entries.append((str(pathlib.Path("share", "servesim", relative)), files))
    return entries


class CMakeBuild(build_ext):
    """Builds the module with CMake and copies it where setuptools packs extensions."""

    def build_extension(self, ext):
        given = os.environ.get("SERVESIM_CMAKE_BUILD_DIR")
        if given:
            build_dir = pathlib.Path(given).resolve()
            if not (build_dir / "CMakeCache.txt").is_file():
                raise SystemExit(f"setup.py: SERVESIM_CMAKE_BUILD_DIR={given}: "
                                 "not a configured CMake build folder (no CMakeCache.txt)")
        else:
            build_dir = (ROOT / BUILD_BASE / "cmake").resolve()
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir),
                            "-DCMAKE_BUILD_TYPE=Release", "-DSERVESIM_BUILD_TESTS=OFF",
                            "-DSERVESIM_CUDA=OFF", f"-DPython3_EXECUTABLE={sys.executable}"],
                           check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "servesim_python",
                        "-j", str(os.cpu_count() or 1)], check=True)
        built = build_dir / "python" / ("servesim" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not built.is_file():
            raise SystemExit(f"setup.py: {built} was not built: is {build_dir} configured "
                             f"for this interpreter ({sys.executable})?")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)


(ROOT / BUILD_BASE).mkdir(parents=True, exist_ok=True)
setup(
    version=project_version(),
    packages=[],
    py_modules=[],
    ext_modules=[Extension("servesim", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    data_files=data_files(),
    options={"build": {"build_base": str(BUILD_BASE)},
             "egg_info": {"egg_base": str(BUILD_BASE)}},
)
