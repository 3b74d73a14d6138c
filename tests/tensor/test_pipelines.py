"""Random pipelines across operator families, against numpy (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_testing import assert_eq

import mars.tensor as mt

STEPS = ["add", "sin", "transpose", "slice", "ravel", "sum_axis", "concat", "mask_sum", "square_T", "cumsum", "fancy",
         "setitem", "reshape", "var", "argmax", "rechunk", "where", "stack_split"]


def _apply(step: str, t, x, draw):
    if step == "add":
        return t * 2 + 1, x * 2 + 1
    if step == "sin":
        return mt.sin(t), np.sin(x)
    if step == "transpose":
        return t.T, x.T
    if step == "slice" and x.ndim and x.shape[0] > 1:
        s = slice(draw(st.integers(0, x.shape[0] - 1)), None, draw(st.sampled_from([1, 2, -1])))
        return t[s], x[s]
    if step == "ravel":
        return mt.ravel(t), np.ravel(x)
    if step == "sum_axis" and x.ndim:
        axis = draw(st.integers(-x.ndim, x.ndim - 1))
        return t.sum(axis=axis), x.sum(axis=axis)
    if step == "concat" and x.ndim:
        return mt.concatenate([t, t * 3], axis=0), np.concatenate([x, x * 3], axis=0)
    if step == "mask_sum":
        return t[t > 0.5].sum(), x[x > 0.5].sum()
    if step == "square_T" and x.ndim == 2:
        return t @ t.T, x @ x.T
    if step == "cumsum" and x.ndim:
        return mt.cumsum(t, axis=-1), np.cumsum(x, axis=-1)
    if step == "setitem" and x.ndim and x.shape[0]:
        i = draw(st.integers(0, x.shape[0] - 1))
        t, x = t * 1, x.copy()
        t[i] = -1.0
        x[i] = -1.0
        return t, x
    if step == "reshape" and x.size:
        return t.reshape(-1, 1) if x.ndim != 2 else t.reshape(x.shape[1], x.shape[0]), (
            x.reshape(-1, 1) if x.ndim != 2 else x.reshape(x.shape[1], x.shape[0]))
    if step == "var" and x.ndim and x.size:
        axis = draw(st.integers(0, x.ndim - 1))
        return t.var(axis=axis), x.var(axis=axis)
    if step == "argmax" and x.ndim and x.size:
        return mt.argmax(t, axis=0), np.argmax(x, axis=0)
    if step == "rechunk" and x.ndim:
        return t.rechunk(draw(st.integers(1, 4))), x
    if step == "where":
        return mt.where(t > 0.3, t, -t), np.where(x > 0.3, x, -x)
    if step == "stack_split" and x.ndim and x.shape[0] >= 2:
        parts = mt.split(t, [1], axis=0)
        return mt.stack([parts[0], parts[0] + 1]), np.stack([x[:1], x[:1] + 1])
    if step == "fancy" and x.ndim and x.shape[0]:
        idx = draw(st.lists(st.integers(0, x.shape[0] - 1), min_size=1, max_size=4))
        return t[idx], x[idx]
    return t, x


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_pipelines_match_numpy(data):
    draw = data.draw
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    x = np.random.RandomState(draw(st.integers(0, 1000))).rand(*shape)
    t = mt.tensor(x, chunk_size=chunks)
    for step in draw(st.lists(st.sampled_from(STEPS), min_size=1, max_size=4)):
        t, x = _apply(step, t, x, draw)
    assert_eq(t, x, rtol=1e-6, atol=1e-12)
