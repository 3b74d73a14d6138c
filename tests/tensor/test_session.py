"""Sessions as users drive them: progress, memory, defaults, lifetimes."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import mars
import mars.tensor as mt


def test_progress_bar_is_drawn_when_asked(capsys):
    t = (mt.ones((40, 40), chunk_size=5) + mt.tensor(np.arange(40.0), chunk_size=3)).sum()
    t.execute(show_progress=True)
    err = capsys.readouterr().err
    assert "chunk" in err and "100%" in err
    with mars.option_context({"show_progress": False}):
        (t + 1).execute()
    assert capsys.readouterr().err == ""


def test_no_progress_bar_when_not_a_terminal(capsys):
    (mt.ones((40, 40), chunk_size=5) * 3).sum().execute()
    assert capsys.readouterr().err == ""


def test_a_chain_over_hundreds_of_megabytes_does_not_hold_every_intermediate():
    n = 40_000_000  # 320 MB of float64 per intermediate; the chain has five of them
    x = mt.arange(n, dtype="float64", chunk_size=n // 16)
    expr = ((((x * 2) + 1) / 3) - 4).sum()
    gc.collect()
    tracemalloc.start()
    try:
        value = expr.execute().fetch()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    expected = (((np.arange(n, dtype="float64") * 2) + 1) / 3 - 4).sum()
    assert np.isclose(value, expected)
    # numpy would peak at two full intermediates (640 MB); fused chunks need a few blocks per thread
    assert peak < 120 * 1024**2, f"peak traced memory {peak / 2**20:.0f} MiB"


def test_sessions_are_independent_and_closing_one_leaves_the_other():
    a, b = mars.new_session(default=False), mars.new_session(default=False)
    t = mt.tensor(np.arange(10), chunk_size=3) * 2
    assert (a.run(t) == np.arange(10) * 2).all()
    assert not b.is_executed(t)
    a.close()
    with pytest.raises(RuntimeError, match="closed"):
        a.run(t)
    assert (b.run(t) == np.arange(10) * 2).all()
    b.close()


def test_as_default_and_new_session_default():
    s1 = mars.new_session()
    assert mars.get_default_session() is s1
    s2 = mars.new_session(default=False)
    assert mars.get_default_session() is s1
    s2.as_default()
    assert mars.get_default_session() is s2
    with pytest.raises(ConnectionError, match="cannot reach the mars web service at http://127.0.0.1:1"):
        mars.new_session("http://127.0.0.1:1")
    assert mars.get_default_session() is s2  # a session that could not start changes nothing


def test_setitem_style_rebinding_frees_old_results():
    sess = mars.get_default_session()
    t = (mt.tensor(np.arange(12.0), chunk_size=4) + 1).execute()
    held = len(sess._store)
    assert held == 3
    t2 = t * 2
    t2.execute()
    del t, t2
    gc.collect()
    assert len(sess._store) == 0


def test_fetch_executes_when_needed_and_repr_before_execution():
    t = mt.ones((2, 3), chunk_size=2) * 2
    assert "Tensor(shape=(2, 3)" in repr(t)
    assert (t.fetch() == 2).all()
    assert isinstance(t.to_numpy(), np.ndarray)


def test_an_object_dying_during_a_run_is_released_when_the_run_ends():
    sess = mars.new_session(default=False)
    done = mt.tensor(np.arange(8.0), chunk_size=4) + 1
    sess.execute(done)
    assert len(sess._store) == 2
    slow = mt.tensor(np.arange(4000.0), chunk_size=1)
    with mars.option_context({"n_threads": 1}):
        total = mt.sin(slow).sum() + mt.cos(slow).sum()
        future = sess.execute(total, wait=False)
        del done
        gc.collect()  # the release cannot wait for the session while it runs
        expected = np.sin(np.arange(4000.0)).sum() + np.cos(np.arange(4000.0)).sum()
        assert future.result(timeout=60) == pytest.approx(expected)
    assert len(sess._store) == 1  # only the new result is held
    sess.close()
