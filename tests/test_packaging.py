"""A regular install works: the wheel carries the catalogs and templates, and the `planner` it
installs builds and calculates from them in a fresh virtual environment, away from the checkout.

Offline by construction: the wheel is built without build isolation (setuptools and wheel come
from the test extras) and installed with --no-index --no-deps into a virtual environment that
reuses the dependencies and pip of the environment running the tests (a ``.pth`` naming its
site-packages folders, --without-pip, so no ensurepip). That environment may itself be a virtual
environment (the README's), whose packages ``--system-site-packages`` would not see; a plain path
line in a ``.pth`` does not run that environment's own ``.pth`` files, so the checkout's editable
install stays out of sight.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import site as python_site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import cli

ROOT = Path(__file__).parent.parent
SOURCES = ("planner", "catalogs", "templates", "setup.py", "setup.cfg", "pyproject.toml",
           "README.md", "MANIFEST.in")
SHIPPED = [f"catalogs/{p.name}" for p in sorted((ROOT / "catalogs").glob("*.yaml"))] + [
    f"templates/{p.name}" for p in sorted((ROOT / "templates").iterdir()) if p.is_file()]


def require_build_tools() -> None:
    missing = [m for m in ("setuptools", "wheel", "venv", "pip")
               if importlib.util.find_spec(m) is None]
    if missing:
        why = f"{', '.join(missing)} missing (pip install -e '.[test]')"
        if os.environ.get("CI") == "true":
            pytest.fail(f"the packaging test needs {why} when CI=true")
        pytest.skip(f"packaging test skipped: {why}")


def run(command: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    result = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.mark.slow
def test_wheel_installs_and_builds_outside_the_checkout(tmp_path) -> None:
    require_build_tools()
    # build from a copy of the sources, so the shared checkout gets no build/ or egg-info
    src = tmp_path / "src"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_data"))
        else:
            shutil.copy2(ROOT / name, src / name)
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", dist, src], cwd=tmp_path)
    (wheel,) = dist.glob("*.whl")

    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        for shipped in SHIPPED:  # every catalog and template, byte for byte the repo's
            assert zf.read(f"planner/_data/{shipped}") == (ROOT / shipped).read_bytes(), shipped
    assert not {n for n in names if n.split("/")[0] in ("catalogs", "templates", "tests")}
    shutil.rmtree(src)  # nothing below may read the sources

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    inner_site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          cwd=tmp_path).stdout.strip())
    outer = [*python_site.getsitepackages(), python_site.getusersitepackages()]
    (inner_site / "outer-environment.pth").write_text("".join(f"{p}\n" for p in outer))
    run([python, "-m", "pip", "install", "--no-index", "--no-deps", "--ignore-installed",
         "--disable-pip-version-check", "-q", wheel], cwd=tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = run([python, "-c", "import planner.inputs.resources as r; print(r.__file__); "
                 "print(r.DATA_ROOT)"], cwd=work).stdout.split()
    site = venv / "lib"
    assert all(Path(p).is_relative_to(site) for p in where), where  # not the checkout

    planner = venv / "bin" / "planner"
    built = json.loads(run([planner, "build", "--out", work / "X", "--json", "-q"],
                           cwd=work).stdout)
    assert sorted(Path(f).name for f in built["files"]) == ["capacity-plan.html",
                                                            "capacity-plan.xlsx"]
    assert all((work / "X" / n).stat().st_size > 0 for n in ("capacity-plan.html",
                                                             "capacity-plan.xlsx"))
    assert built["rows"] > 1000  # the default grid over the packaged catalogs

    calc = ["calc", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--json"]
    installed = json.loads(run([planner, *calc], cwd=work).stdout)
    checkout = json.loads(CliRunner().invoke(cli, calc, catch_exceptions=False).output)
    assert installed == checkout
