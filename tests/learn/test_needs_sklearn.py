"""mars.learn says which extra it needs where scikit-learn is missing; the rest of mars never needs it."""

from __future__ import annotations

import subprocess
import sys

BLOCK = """
import sys
class NoSklearn:
    def find_spec(self, name, path=None, target=None):
        if name == "sklearn" or name.startswith("sklearn."):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, NoSklearn())
import importlib.util
importlib.util.find_spec = (lambda f: lambda name, *a: None if name.split('.')[0] == 'sklearn' else f(name, *a))(
    importlib.util.find_spec)
"""


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK + code], capture_output=True, text=True, timeout=120)


def test_without_scikit_learn_mars_learn_names_the_extra_and_the_rest_works():
    r = _run("import mars.learn.cluster")
    assert r.returncode != 0 and "pip install 'pymars[learn]'" in r.stderr, r.stderr[-500:]
    r = _run("import mars, mars.tensor as mt, mars.dataframe as md\n"
             "print(float(mt.ones(4, chunk_size=2).sum().execute().fetch()))")
    assert r.returncode == 0 and r.stdout.strip() == "4.0", r.stderr[-500:]
