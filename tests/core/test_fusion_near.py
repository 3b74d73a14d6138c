"""A step kept apart only so that less moves between workers (``fuses_near = True``: the rows a partition gives to
its neighbour) runs in its reader's subtask when the data is in one process (``fuse(..., in_process=True)``: an
embedded session; a cluster passes ``in_process=False``)."""

from __future__ import annotations

import pandas as pd
import pandas.testing as pdt
import pytest
from fusion_testing import run_subtasks, subtask

from mars.core.fusion import FusedOp, fuse
from mars.dataframe.groupby.agg import KeyRows


class Rows:
    """The rows of the next partition whose key is the last of this one."""

    fuses_inputs = True
    fuses_near = True

    def execute(self, part):
        return part[part.k == 3]


class Recut:
    fusible = True

    def execute(self, part, following):
        return pd.concat([part, following])


class Count:
    fuses_inputs = True

    def execute(self, part):
        return part.groupby("k").size()


HELD = {"p0": pd.DataFrame({"k": [1, 2, 3]}), "p1": pd.DataFrame({"k": [3, 3, 4]})}


def _graph() -> list:
    return [subtask(Rows(), ["p1"], ["r"]), subtask(Recut(), ["p0", "r"], ["c"]), subtask(Count(), ["c"], ["out"])]


@pytest.mark.parametrize("near", [True, False])
def test_the_rows_are_cut_in_the_readers_subtask_in_one_process(near):
    fused = fuse(_graph(), {"out"}, in_process=near)
    groups = [[type(s.op).__name__ for s in st.op.steps] if isinstance(st.op, FusedOp) else [type(st.op).__name__]
              for st in fused]
    assert groups == ([["Rows", "Recut", "Count"]] if near else [["Rows"], ["Recut", "Count"]])
    assert run_subtasks(fused, HELD)["out"].tolist() == [1, 1, 3]
    pdt.assert_series_equal(run_subtasks(fused, HELD)["out"], run_subtasks(_graph(), HELD)["out"])


def test_key_rows_fuses_near():
    assert KeyRows.fuses_near and not getattr(KeyRows, "fusible", False)
