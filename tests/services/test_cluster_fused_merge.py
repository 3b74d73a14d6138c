"""A merge of a projected frame on an in-process cluster: the projection runs in the merge's subtask."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt

import mars.dataframe as md
from mars.core.fusion import FusedOp
from mars.services.task import processor


def test_a_projection_fused_into_its_merge_equals_pandas(session, monkeypatch):
    groups: list[str] = []
    real = processor.fuse

    def recording(subtasks, keep):
        out = real(subtasks, keep)
        groups.extend(repr(st.op) for st in out if isinstance(st.op, FusedOp))
        return out

    monkeypatch.setattr(processor, "fuse", recording)
    rng = np.random.default_rng(3)
    left = pd.DataFrame({"k": rng.choice(list("abcdefg"), 90), "x": rng.random(90), "y": np.arange(90)})
    right = pd.DataFrame({"k": list("abcde"), "w": np.arange(5) * 0.5})
    lazy = md.DataFrame(left, chunk_size=(1, 40, 0, 49))[["k", "x"]].merge(md.DataFrame(right, chunk_size=2), on="k")
    pdt.assert_frame_equal(session.run(lazy), left[["k", "x"]].merge(right, on="k"))
    assert "FusedOp(SelectColumns -> MergeChunk)" in groups, groups
