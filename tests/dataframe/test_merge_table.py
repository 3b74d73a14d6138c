"""The broadcast inner join on one integer key, through a key table looked up by every partition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.dataframe.merge_table import BuildKeyTable, key_table, partners


def _frames(seed: int, n_left: int, n_right: int, key_range: int, dtype: str = "int64") -> tuple:
    rng = np.random.default_rng(seed)
    left = pd.DataFrame({"x": rng.random(n_left), "k": rng.integers(0, key_range, n_left).astype(dtype),
                         "s": rng.choice(["a", "b"], n_left), "v": rng.integers(0, 9, n_left)})
    right = pd.DataFrame({"v": rng.random(n_right), "k": rng.integers(0, key_range, n_right).astype(dtype),
                          "c": pd.Categorical(rng.choice(["p", "q"], n_right))})
    return left, right


@pytest.mark.parametrize("left_chunks", [1, 7, [30, 0, 1, 49, 20], 100])
@pytest.mark.parametrize("key_range", [40, 1000, 10**9])  # duplicate keys, unique-ish keys, a range too wide
def test_inner_merge_equals_pandas(left_chunks: object, key_range: int) -> None:
    left, right = _frames(key_range, 100, 40, key_range)
    if key_range == 1000:
        right["k"] = np.random.default_rng(1).permutation(1000)[:40]  # unique right keys
    expected = left.merge(right, on="k", suffixes=("_l", "_r"))
    chunk_size = left_chunks if isinstance(left_chunks, list) else -(-100 // left_chunks)
    result = md.DataFrame(left, chunk_size=chunk_size).merge(md.DataFrame(right, chunk_size=15), on="k",
                                                             suffixes=("_l", "_r"))
    pd.testing.assert_frame_equal(result.to_pandas(), expected)


def test_broadcast_uses_the_table_and_keeps_dtypes(monkeypatch: pytest.MonkeyPatch) -> None:
    built = []
    original = BuildKeyTable.execute
    monkeypatch.setattr(BuildKeyTable, "execute", lambda self, *parts: built.append(1) or original(self, *parts))
    left, right = _frames(3, 200, 30, 50, dtype="uint16")
    right = right.drop_duplicates("k")
    result = md.DataFrame(left, chunk_size=20).merge(md.DataFrame(right, chunk_size=10), on="k")
    pd.testing.assert_frame_equal(result.to_pandas(), left.merge(right, on="k"))
    assert built == [1]  # one table for the ten left partitions


def test_no_match_and_empty_partitions() -> None:
    left, right = _frames(4, 60, 20, 30)
    right["k"] += 1000  # nothing matches
    result = md.DataFrame(left, chunk_size=[0, 30, 0, 30]).merge(md.DataFrame(right, chunk_size=7), on="k")
    pd.testing.assert_frame_equal(result.to_pandas(), left.merge(right, on="k"))


def test_negative_and_out_of_range_keys() -> None:
    left = pd.DataFrame({"k": np.array([-2**63, -5, 3, 2**63 - 1, -4, 3], dtype=np.int64), "a": range(6)})
    right = pd.DataFrame({"k": np.array([3, -5, -4, 3]), "b": [1.0, 2.0, 3.0, 4.0]})
    result = md.DataFrame(left, chunk_size=2).merge(md.DataFrame(right, chunk_size=3), on="k")
    pd.testing.assert_frame_equal(result.to_pandas(), left.merge(right, on="k"))


@pytest.mark.parametrize("kwargs", [{"how": "left"}, {"indicator": True}, {"sort": True}])
def test_other_joins_still_equal_pandas(kwargs: dict) -> None:
    left, right = _frames(5, 80, 20, 25)
    result = md.DataFrame(left, chunk_size=9).merge(md.DataFrame(right, chunk_size=6), on="k", **kwargs)
    pd.testing.assert_frame_equal(result.to_pandas(), left.merge(right, on="k", **kwargs))


def test_partners_order_is_pandas_order() -> None:
    table = key_table(pd.DataFrame({"k": [5, 7, 5, 5, 9]}), "k")
    lrows, rrows = partners(table, np.array([9, 5, 6, 5]))
    assert lrows.tolist() == [0, 1, 1, 1, 3, 3, 3]
    assert rrows.tolist() == [4, 0, 2, 3, 0, 2, 3]
    assert key_table(pd.DataFrame({"k": np.array([], dtype=np.int64)}), "k").starts is None


@pytest.mark.parametrize("key_range", [40, 10**9])  # a key table, and keys too wide for one
def test_merges_number_their_own_rows(key_range: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from mars.dataframe.rows import RenumberRows

    renumbered = []
    original = RenumberRows.execute
    monkeypatch.setattr(RenumberRows, "execute", lambda self, *a: renumbered.append(1) or original(self, *a))
    rng = np.random.default_rng(8)
    left = pd.DataFrame({"k": rng.integers(0, 40, 90) * (key_range // 40), "a": rng.random(90)})
    right = pd.DataFrame({"k": rng.integers(0, 40, 30) * (key_range // 40), "b": rng.random(30)})
    result = md.DataFrame(left, chunk_size=[20, 0, 31, 39]).merge(md.DataFrame(right, chunk_size=8), on="k")
    expected = left.merge(right, on="k")
    got = result.execute()
    pd.testing.assert_frame_equal(got.fetch(), expected)
    assert sum(got.nsplits[0]) == len(expected)
    assert renumbered == []  # each merge wrote its rows once, numbered from the partner counts before it


def test_partner_count_is_the_merge_size() -> None:
    from mars.dataframe.merge_table import partner_count

    rng = np.random.default_rng(9)
    right = pd.DataFrame({"k": rng.integers(-5, 5, 30)})
    keys = pd.Series(rng.integers(-8, 8, 50), name="k")
    for frame in (right, right.drop_duplicates()):
        assert partner_count(key_table(frame, "k"), keys) == len(keys.to_frame().merge(frame, on="k"))
