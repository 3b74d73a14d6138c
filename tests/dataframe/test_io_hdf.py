"""md.read_hdf and the lazy to_hdf against pandas, on real HDF5 files (PyTables)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from tests.dataframe.df_testing import assert_eq, partitionings

pytest.importorskip("tables")
pytestmark = [pytest.mark.filterwarnings("ignore::pandas.errors.PerformanceWarning"),
              pytest.mark.filterwarnings("ignore:Writing an empty DataFrame:UserWarning")]


def _frame(n: int = 50) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": np.arange(n), "x": rng.random(n), "s": rng.choice(["p", "qq"], n)},
                        index=pd.Index(np.arange(n) * 3 + 7, name="i"))


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "s.h5"
    pdf = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pdf.to_hdf(path, key="fixed")
        pdf.to_hdf(path, key="table", format="table", data_columns=["a"])
        pdf["x"].to_hdf(path, key="series")
    return path


@pytest.mark.parametrize("chunk_size", [1, 7, 50, None])
@pytest.mark.parametrize("key", ["fixed", "table", "series"])
def test_read_hdf_equals_pandas(store, chunk_size, key):
    df = md.read_hdf(store, key, chunk_size=chunk_size)
    expected = pd.read_hdf(store, key)
    assert df.shape[0] == len(expected)  # counted when built
    assert_eq(df, expected)
    if chunk_size == 7:
        assert len(df.chunks) == 8


@pytest.mark.parametrize("chunk_size", [6, 100])
def test_read_hdf_where_and_columns(store, chunk_size):
    kw = {"where": "a > 20 & a < 33", "columns": ["s", "a"]}
    assert_eq(md.read_hdf(store, "table", chunk_size=chunk_size, **kw), pd.read_hdf(store, "table", **kw))


def test_read_hdf_several_files_and_errors(tmp_path, store):
    for i in range(2):
        _frame(10 + i).to_hdf(tmp_path / f"p-{i}.h5", key="d", format="table")
    expected = pd.concat([pd.read_hdf(tmp_path / f"p-{i}.h5") for i in range(2)])
    assert_eq(md.read_hdf(str(tmp_path / "p-*.h5"), chunk_size=4), expected)
    with pytest.raises(ValueError, match="key must be provided"):
        md.read_hdf(store)
    with pytest.raises(KeyError, match="nope"):
        md.read_hdf(store, "nope")
    with pytest.raises(NotImplementedError, match="local files"):
        md.read_hdf("memory://x.h5", "d")


@pytest.mark.parametrize("chunk_size", partitionings(20))
@pytest.mark.parametrize("fmt", ["fixed", "table"])
def test_to_hdf_one_file_and_per_partition(tmp_path, chunk_size, fmt):
    pdf = _frame(20)
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    out = tmp_path / "out.h5"
    written = df.to_hdf(out, key="d", format=fmt)
    assert not out.exists()
    written.execute()
    pdt.assert_frame_equal(pd.read_hdf(out, "d"), pdf)
    df.to_hdf(str(tmp_path / "p-*.h5"), key="d", format=fmt).execute()
    files = sorted(tmp_path.glob("p-*.h5"))
    assert len(files) == len(df.execute().chunks)
    if fmt == "fixed" or 0 not in df.nsplits[0]:
        assert_eq(md.read_hdf(str(tmp_path / "p-*.h5"), "d"), pdf)
    else:  # pandas writes nothing for an empty frame in the table format: those files hold no "d"
        with pytest.raises(KeyError, match="No object named d"):
            md.read_hdf(str(tmp_path / "p-*.h5"), "d")
    md.Series(pdf["x"], chunk_size=chunk_size).to_hdf(out, key="x", format=fmt).execute()
    pdt.assert_series_equal(pd.read_hdf(out, "x"), pdf["x"])
