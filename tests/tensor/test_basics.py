"""The first path end to end: create, compute elementwise, reduce, fetch."""

from __future__ import annotations

import numpy as np
import pytest

import mars
import mars.tensor as mt

from tensor_testing import assert_eq, chunkings


@pytest.mark.parametrize("chunk_size", chunkings((5, 7)))
def test_elementwise_chain_and_reductions(chunk_size):
    x = np.random.RandomState(0).rand(5, 7)
    t = mt.tensor(x, chunk_size=chunk_size)
    assert_eq((t * 2 + 1) ** 2, (x * 2 + 1) ** 2)
    assert_eq(((t * 2 + 1) ** 2).mean(), ((x * 2 + 1) ** 2).mean())
    for axis in (None, 0, 1, (0, 1), -1):
        for keepdims in (False, True):
            assert_eq(mt.sum(t, axis=axis, keepdims=keepdims), np.sum(x, axis=axis, keepdims=keepdims))
            assert_eq(t.mean(axis=axis, keepdims=keepdims), x.mean(axis=axis, keepdims=keepdims))
            assert_eq(t.max(axis=axis, keepdims=keepdims), x.max(axis=axis, keepdims=keepdims))


def test_execute_returns_itself_and_repr_shows_data():
    t = mt.ones((2, 2), chunk_size=1) * 3
    assert t.execute() is t
    assert "3." in repr(t)
    assert isinstance(t.fetch(), np.ndarray)


def test_same_expression_twice_has_same_keys():
    a = (mt.ones((5, 5), chunk_size=3) * 4).sum(axis=0)
    b = (mt.ones((5, 5), chunk_size=3) * 4).sum(axis=0)
    assert a.key == b.key
    c = (mt.ones((5, 5), chunk_size=2) * 4).sum(axis=0)
    assert c.key != a.key
    x = np.arange(10)
    assert mt.tensor(x).key == mt.tensor(x.copy()).key != mt.tensor(x + 1).key


def test_broadcast_errors_raise_when_built():
    with pytest.raises(ValueError, match="could not be broadcast"):
        mt.ones((3, 4)) + mt.ones((5,))
    with pytest.raises(np.exceptions.AxisError):
        mt.ones((3, 4)).sum(axis=2)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "x"])
def test_bad_chunk_size_names_the_value(bad):
    with pytest.raises((ValueError, TypeError), match=repr(bad).strip("'")):
        mt.ones((4, 4), chunk_size=bad)


def test_dtype_promotion_follows_numpy():
    i = mt.ones(4, dtype="int32", chunk_size=3)
    ni = np.ones(4, dtype="int32")
    assert_eq(i + 1, ni + 1)
    assert_eq(i + 1.5, ni + 1.5)
    assert_eq(i / 2, ni / 2)
    assert_eq(i.sum(), ni.sum())
    assert_eq(i.mean(), ni.mean())
    assert_eq(mt.ones(3, dtype="float32") * np.float64(2), np.ones(3, dtype="float32") * np.float64(2))


def test_numpy_ufuncs_stay_lazy():
    t = mt.ones((3, 3), chunk_size=2)
    s = np.sin(t)
    assert isinstance(s, mt.Tensor)
    assert_eq(s, np.sin(np.ones((3, 3))))
    assert_eq(np.add.reduce(t), np.add.reduce(np.ones((3, 3))))
    assert_eq(np.sum(t, axis=1), np.ones((3, 3)).sum(axis=1))
    assert np.asarray(t).shape == (3, 3)


def test_execute_several_shares_work_and_session_run():
    sess = mars.new_session()
    base = mt.ones((6, 6), chunk_size=2) + 1
    a, b = base.sum(), (base * 2).sum()
    mars.execute(a, b)
    assert a.fetch() == 72 and b.fetch() == 144
    assert sess.run(base.mean()) == 2.0


def test_execute_wait_false_future():
    t = (mt.ones((100, 100), chunk_size=10) * 2).sum()
    future = t.execute(wait=False)
    assert future.result(timeout=30) == 20000  # what fetch() gives (seed 003)
    assert future.done()
    assert t.fetch() == 20000


def test_eager_mode_runs_on_build():
    with mars.option_context({"eager_mode": True}):
        t = mt.ones((3, 3), chunk_size=2) * 5
        assert mars.get_default_session().is_executed(t)
        assert "5." in repr(t)


def test_error_in_chunk_function_raises_and_session_survives():
    t = mt.tensor(np.array([1, 2, 3]), chunk_size=1)
    bad = t.astype("float64") ** mt.tensor(np.array([1.0, 2.0, 3.0]))  # fine
    assert_eq(bad, np.array([1.0, 4.0, 27.0]))
    with pytest.raises(TypeError):
        mt.ones(3, dtype=int).astype("int8", casting="safe")
    assert (t + 1).sum().fetch() == 9


def test_results_freed_when_objects_die():
    import gc

    sess = mars.new_session()
    t = (mt.tensor(np.arange(100.0).reshape(10, 10), chunk_size=5) + 1).execute()
    assert len(sess._store) == 4
    del t
    gc.collect()
    assert len(sess._store) == 0
