"""A fresh install works the first time: ``pip install pymars`` alone, no extras, not editable.

The slow test builds a virtual environment in a temporary folder, installs the
package there as a user would (a wheel built from a copy of the source, so
the package data must be declared to be there at all), and runs a local
cluster with a tensor job, a DataFrame job, CSV and a Parquet round trip.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Not copied to the build: what is not the package's (a wheel built in the
# working tree would leave build/ and *.egg-info in it, shared with others).
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.pyc",
                                     "node_modules", "web-ui", "test-artifacts", ".pytest_cache", ".hypothesis")

# Run by the installed package, in its own venv, from a folder with no mars/ in it.
_USER_SCRIPT = r"""
import importlib.util
import pathlib
import sys
import urllib.request

import numpy as np
import pandas as pd

import mars
import mars.dataframe as md
import mars.tensor as mt
from mars.deploy.local import new_cluster

assert "site-packages" in mars.__file__, f"mars imported from {mars.__file__}, not the installed package"
assert "sqlalchemy" not in sys.modules, "import mars.dataframe loaded sqlalchemy"
work = pathlib.Path(sys.argv[1])

with new_cluster(n_worker=1, n_cpu=1) as cluster:
    t = mt.arange(100, chunk_size=30).reshape(10, 10)
    got = (t * 2).sum(axis=0).execute().fetch()
    np.testing.assert_array_equal(got, (np.arange(100).reshape(10, 10) * 2).sum(axis=0))

    pdf = pd.DataFrame({"a": np.arange(40), "b": np.linspace(0, 1, 40), "c": list("xyzw") * 10})
    pdf.to_csv(work / "data.csv", index=False)
    df = md.read_csv(work / "data.csv", chunk_bytes=200)
    pd.testing.assert_frame_equal(df.execute().fetch(), pd.read_csv(work / "data.csv"))
    pd.testing.assert_series_equal(df[["a", "b"]].sum().execute().fetch(), pdf[["a", "b"]].sum())

    df.to_parquet(str(work / "parquet") + "/").execute()  # writers are lazy: the workers write the files
    back = md.read_parquet(work / "parquet").execute().fetch()
    pd.testing.assert_frame_equal(back.reset_index(drop=True), pdf)

    # the dashboard's files are package data: the page and a script of it
    page = urllib.request.urlopen(f"{cluster.web_address}/?token={cluster.token}", timeout=30).read().decode()
    assert "<html" in page.lower(), page[:200]
    assert urllib.request.urlopen(f"{cluster.web_address}/static/app.js", timeout=30).status == 200

# SQLAlchemy is an extra: not installed, and read_sql says how to get it
assert importlib.util.find_spec("sqlalchemy") is None, "a plain install pulled in sqlalchemy"
try:
    md.read_sql("t", f"sqlite:///{work / 'x.db'}")
except ImportError as e:
    assert "pip install 'pymars[sql]'" in str(e), e
else:
    raise AssertionError("read_sql without SQLAlchemy did not raise ImportError")
print("ok")
"""


def _clean_env() -> dict[str, str]:
    """This environment without what would point the new venv's Python at this checkout or venv."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    return {k: v for k, v in os.environ.items() if k not in drop}


def test_import_mars_dataframe_loads_no_sqlalchemy() -> None:
    code = "import sys, mars.dataframe; print(sorted(m for m in ('sqlalchemy',) if m in sys.modules))"
    loaded = subprocess.check_output([sys.executable, "-c", code], text=True, cwd=ROOT).strip()
    assert loaded == "[]", f"import mars.dataframe loaded {loaded}"


def test_read_sql_without_sqlalchemy_names_the_extra(tmp_path: pathlib.Path) -> None:
    # sys.modules[name] = None makes that import fail as if it were not installed
    code = (
        "import sys; sys.modules['sqlalchemy'] = None\n"
        "import mars.dataframe as md\n"
        f"md.read_sql('t', 'sqlite:///{tmp_path / 'x.db'}')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode != 0
    assert "ImportError: read_sql needs SQLAlchemy: pip install 'pymars[sql]'" in proc.stderr, proc.stderr


def _venv(path: pathlib.Path) -> pathlib.Path:
    if importlib.util.find_spec("venv") is None or importlib.util.find_spec("ensurepip") is None:
        pytest.skip("this Python has no venv/ensurepip module (on Debian: apt install python3-venv)")
    proc = subprocess.run([sys.executable, "-m", "venv", str(path)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"python -m venv is unavailable here: {proc.stderr.strip()[-500:]}")
    return path / "bin" / "python"


@pytest.mark.timeout(600)
def test_plain_pip_install_runs_a_cluster_with_csv_and_parquet(tmp_path: pathlib.Path) -> None:
    python = _venv(tmp_path / "venv")
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCE)
    env = _clean_env()
    start = time.perf_counter()
    pip = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                          str(source)], capture_output=True, text=True, env=env, timeout=480)
    assert pip.returncode == 0, f"pip install failed:\n{pip.stdout[-3000:]}\n{pip.stderr[-3000:]}"
    installed = time.perf_counter() - start
    work = tmp_path / "work"
    work.mkdir()
    (work / "user.py").write_text(_USER_SCRIPT)
    run = subprocess.run([str(python), "user.py", str(work)], capture_output=True, text=True, env=env, cwd=work,
                         timeout=240)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), (
        f"the installed package failed (pip install took {installed:.0f} s):\n{run.stdout[-3000:]}\n"
        f"{run.stderr[-5000:]}")
