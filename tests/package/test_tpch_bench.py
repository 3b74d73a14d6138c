"""benchmarks/tpch: the answer check catches wrong answers, and a tiny run of pandas, mars and DuckDB agrees."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

import pandas as pd
import pytest

TPCH = pathlib.Path(__file__).parents[2] / "benchmarks" / "tpch"
sys.path.insert(0, str(TPCH))

duckdb = pytest.importorskip("duckdb")
from run import check


def test_check_accepts_other_dtypes_and_row_order_without_order_by() -> None:
    expected = pd.DataFrame({"k": ["a", "b"], "v": [1.0, 2.0], "d": pd.to_datetime(["2020-01-01", "2020-01-02"])})
    got = pd.DataFrame({"name": ["b", "a"], "v": [2, 1], "d": [pd.Timestamp("2020-01-02").date(),
                                                                pd.Timestamp("2020-01-01").date()]})
    assert check(got, expected, []) is None
    assert check(3.0, pd.DataFrame({"revenue": [3.0 * (1 + 1e-9)]}), []) is None


def test_check_names_the_first_mismatch() -> None:
    expected = pd.DataFrame({"k": ["a", "b"], "v": [1.0, 2.0]})
    assert check(expected.iloc[::-1], expected, ["k"]) == "order: column 'k' row 0: got 'b', expected 'a'"
    assert check(expected.assign(v=[1.0, 2.1]), expected, ["k"]) == "column 'v' row 1: got 2.1, expected 2.0"
    assert check(expected.head(1), expected, []) == "1 rows, expected 2"
    assert check(expected[["k"]], expected, []).startswith("1 columns")
    assert check(5.0, pd.DataFrame({"revenue": [5.1]}), []) == "column 'revenue' row 0: got 5.0, expected 5.1"


HAS_TPCHGEN = (pathlib.Path(sys.executable).parent / "tpchgen-cli").exists() or shutil.which("tpchgen-cli") is not None


@pytest.mark.skipif(not HAS_TPCHGEN, reason="needs tpchgen-cli (pip install 'pymars[bench]')")
def test_tiny_run_gets_every_answer_right_on_pandas_and_mars(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "figures.json"
    subprocess.run(
        [sys.executable, str(TPCH / "run.py"), "--scale", "0.01", "--data-dir", str(tmp_path / "data"),
         "--engines", "pandas,mars,duckdb", "--chunk-rows", "20000", "--timeout", "120", "--json", str(out)],
        check=True, capture_output=True, timeout=300,
    )
    figures = json.loads(out.read_text())
    for engine in ("pandas", "mars", "duckdb"):
        wrong = {q: v for q, v in figures["verdicts"][engine].items() if v is not None}
        assert wrong == {}, f"{engine}: {wrong}"
        assert len(figures["results"][engine]["queries"]) == 22
        assert figures["results"][engine]["load"]["seconds"] > 0
