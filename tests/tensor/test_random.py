"""mt.random: numpy's dtypes and shapes, fixed values, independent chunks, sane distributions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mars
import mars.tensor as mt
from mars.core.operator import Tiled
from mars.tensor.core import TensorOperator

from tensor_testing import chunkings

# (name, args, kwargs) with the same meaning in np.random and mt.random
CALLS = [
    ("rand", (3, 4), {}),
    ("randn", (5,), {}),
    ("random_sample", ((2, 3),), {}),
    ("random", (7,), {}),
    ("ranf", (7,), {}),
    ("sample", (7,), {}),
    ("randint", (5,), {"size": 9}),
    ("randint", (-3, 3), {"size": (2, 5), "dtype": "int16"}),
    ("randint", (0, 2), {"size": 6, "dtype": bool}),
    ("uniform", (1, 4), {"size": (4, 3)}),
    ("normal", (3, 2), {"size": 10}),
    ("standard_normal", ((3, 3),), {}),
    ("poisson", (4.0,), {"size": 8}),
    ("binomial", (10, 0.3), {"size": 8}),
    ("exponential", (2.0,), {"size": 8}),
    ("standard_exponential", (8,), {}),
    ("beta", (2, 3), {"size": 6}),
    ("gamma", (2.0,), {"size": 6}),
    ("standard_gamma", (2.0,), {"size": 6}),
    ("lognormal", (0, 1), {"size": 6}),
    ("laplace", (), {"size": 6}),
    ("logistic", (), {"size": 6}),
    ("gumbel", (), {"size": 6}),
    ("geometric", (0.3,), {"size": 6}),
    ("chisquare", (3,), {"size": 6}),
    ("standard_t", (3,), {"size": 6}),
    ("standard_cauchy", (6,), {}),
    ("pareto", (3,), {"size": 6}),
    ("weibull", (3,), {"size": 6}),
    ("rayleigh", (), {"size": 6}),
    ("negative_binomial", (3, 0.5), {"size": 6}),
    ("triangular", (0, 1, 3), {"size": 6}),
    ("zipf", (2.0,), {"size": 6}),
    ("choice", (5,), {"size": 6}),
    ("choice", ([1.5, 2.5, 3.5],), {"size": (2, 2), "p": [0.2, 0.3, 0.5]}),
    ("choice", (9,), {"size": 6, "replace": False}),
    ("permutation", (6,), {}),
    ("permutation", (np.arange(12.0).reshape(6, 2),), {}),
    ("normal", (), {}),
    ("randint", (5,), {}),
]


@pytest.mark.parametrize("name, args, kw", CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_dtype_shape_like_numpy_and_values_fixed(name, args, kw):
    expected = np.asarray(getattr(np.random, name)(*args, **kw))
    t = getattr(mt.random, name)(*args, chunk_size=2, **kw)
    assert t.dtype == expected.dtype and t.shape == expected.shape
    first = t.execute().fetch()
    assert np.asarray(first).dtype == expected.dtype and np.shape(first) == expected.shape
    # the values were fixed when the tensor was built: a fresh session computes them again
    with mars.new_session() as sess:
        np.testing.assert_array_equal(sess.run(t), first)
        np.testing.assert_array_equal(sess.run(t + 0), first)


def test_seed_makes_creations_reproducible_and_calls_differ():
    mt.random.seed(42)
    a, b = mt.random.rand(20, chunk_size=7), mt.random.randint(100, size=20)
    mt.random.seed(42)
    a2, b2 = mt.random.rand(20, chunk_size=7), mt.random.randint(100, size=20)
    assert a.key == a2.key and b.key == b2.key
    np.testing.assert_array_equal(a.execute().fetch(), a2.execute().fetch())
    c = mt.random.rand(20, chunk_size=7)
    assert c.key != a.key
    assert not np.array_equal(c.execute().fetch(), a.execute().fetch())
    rs1, rs2 = mt.random.RandomState(3), mt.random.RandomState(3)
    np.testing.assert_array_equal(rs1.randn(9, chunk_size=4).execute().fetch(),
                                  rs2.randn(9, chunk_size=4).execute().fetch())
    assert mt.random.RandomState(4).rand(3).key != mt.random.RandomState(3).rand(3).key


@pytest.mark.parametrize("make", [
    lambda: mt.random.rand(100, chunk_size=10),
    lambda: mt.random.randint(0, 2**40, size=(10, 10), chunk_size=5),
    lambda: mt.random.normal(size=(4, 25), chunk_size=(1, 25)),
])
def test_chunks_are_independent(make):
    t = make().execute()
    values = t.fetch()
    starts = [np.cumsum((0,) + s) for s in t.nsplits]
    blocks = [values[tuple(slice(starts[d][i], starts[d][i + 1]) for d, i in enumerate(c.index))].ravel()
              for c in t.chunks]
    assert len(blocks) > 1
    for x, y in itertools.combinations(blocks, 2):
        assert not np.array_equal(x, y)
    assert len(np.unique(values)) > 0.9 * values.size


def test_distributions_are_sane():
    n = 200_000
    x = mt.random.normal(3.0, 2.0, size=n, chunk_size=30_000).execute().fetch()
    assert abs(x.mean() - 3.0) < 0.03 and abs(x.std() - 2.0) < 0.03
    u = mt.random.uniform(-2, 6, size=n, chunk_size=30_000).execute().fetch()
    assert u.min() >= -2 and u.max() < 6 and abs(u.mean() - 2.0) < 0.05
    r = mt.random.rand(n, dtype="float32", chunk_size=50_000).execute().fetch()
    assert r.dtype == np.float32 and 0 <= r.min() and r.max() < 1 and abs(r.std() - (1 / 12) ** 0.5) < 0.01
    i = mt.random.randint(3, 9, size=n, chunk_size=30_000).execute().fetch()
    assert set(np.unique(i)) == set(range(3, 9))
    assert np.abs(np.bincount(i)[3:] / n - 1 / 6).max() < 0.01
    p = mt.random.poisson(4.0, size=n, chunk_size=30_000).execute().fetch()
    assert abs(p.mean() - 4.0) < 0.03 and abs(p.var() - 4.0) < 0.1
    e = mt.random.exponential(0.5, size=n).execute().fetch()
    assert abs(e.mean() - 0.5) < 0.01
    b = mt.random.binomial(10, 0.3, size=n, chunk_size=30_000).execute().fetch()
    assert abs(b.mean() - 3.0) < 0.03


def test_tensor_parameters_broadcast():
    loc = mt.arange(4.0, chunk_size=3) * 1000
    x = mt.random.normal(loc, 1, size=(500, 4), chunk_size=(200, 2)).execute().fetch()
    np.testing.assert_allclose(x.mean(axis=0), [0, 1000, 2000, 3000], atol=0.3)
    lam = np.array([[1.0], [50.0]])
    y = mt.random.poisson(lam, size=(2, 3000), chunk_size=700)
    assert y.shape == (2, 3000) and y.dtype == np.int64
    np.testing.assert_allclose(y.execute().fetch().mean(axis=1), [1, 50], rtol=0.05)
    z = mt.random.uniform(mt.tensor([0.0, 10.0]), [1.0, 11.0], chunk_size=1).execute().fetch()
    assert z.shape == (2,) and 0 <= z[0] < 1 and 10 <= z[1] < 11


@pytest.mark.parametrize("call, error, match", [
    (lambda r: r.randint(5, 2), ValueError, "low >= high"),
    (lambda r: r.randint(5, size=-1), ValueError, "negative"),
    (lambda r: r.randint(5, dtype=float), TypeError, "Unsupported dtype"),
    (lambda r: r.randint(-1, 5, dtype=np.uint8), ValueError, "out of bounds"),
    (lambda r: r.rand(-1), ValueError, "negative"),
    (lambda r: r.rand(2.5), TypeError, "float"),
    (lambda r: r.normal(0, -1), ValueError, "scale < 0"),
    (lambda r: r.normal(np.zeros(3), size=(2,)), ValueError, "shape mismatch"),
    (lambda r: r.poisson(-1), ValueError, "lam < 0"),
    (lambda r: r.binomial(1, 1.5), ValueError, "p < 0"),
    (lambda r: r.choice(0), ValueError, "greater than 0"),
    (lambda r: r.choice(-2), ValueError, "greater than 0"),
    (lambda r: r.choice(2.5), ValueError, "1-dimensional or an integer"),
    (lambda r: r.choice([]), ValueError, "cannot be empty"),
    (lambda r: r.choice([[1]]), ValueError, "1-dimensional"),
    (lambda r: r.choice(3, p=[0.5, 0.5]), ValueError, "same size"),
    (lambda r: r.choice(2, p=[0.6, 0.6]), ValueError, "do not sum to 1"),
    (lambda r: r.choice(2, p=[-0.5, 1.5]), ValueError, "non-negative"),
    (lambda r: r.choice(2, p=[[0.5, 0.5]]), ValueError, "'p' must be 1-dimensional"),
    (lambda r: r.choice(2, p=[np.nan, 1]), ValueError, "NaN"),
    (lambda r: r.choice(3, size=4, replace=False), ValueError, "larger sample"),
    (lambda r: r.choice(3, size=2, replace=False, p=[1, 0, 0]), ValueError, "Fewer non-zero"),
    (lambda r: r.permutation(np.array(3)), IndexError, "at least 1-dimensional"),
    (lambda r: r.permutation(3.0), IndexError, "at least 1-dimensional"),
])
def test_bad_arguments_raise_like_numpy_when_built(call, error, match):
    with pytest.raises(error, match=match):
        call(np.random.RandomState(0))
    with pytest.raises(error, match=match):
        call(mt.random)


def test_float_dtype_must_be_one_numpy_generates():
    with pytest.raises(TypeError, match="Unsupported dtype"):
        np.random.default_rng(0).random(3, dtype="int64")
    with pytest.raises(TypeError, match="Unsupported dtype.*int64"):
        mt.random.random_sample(3, dtype="int64")
    with pytest.raises(TypeError, match="Unsupported dtype.*float16"):
        mt.random.randn(3, dtype="float16")


def test_choice_with_and_without_replacement():
    population = np.array([10.0, 20.0, 30.0, 40.0])
    s = mt.random.choice(mt.tensor(population, chunk_size=3), size=(40, 5), chunk_size=7).execute().fetch()
    assert s.shape == (40, 5) and set(np.unique(s)) == set(population)
    w = mt.random.choice(4, size=100_000, p=[0.1, 0.2, 0.3, 0.4], chunk_size=30_000).execute().fetch()
    np.testing.assert_allclose(np.bincount(w) / w.size, [0.1, 0.2, 0.3, 0.4], atol=0.01)
    for chunk_size in chunkings((6, 5)):
        u = mt.random.choice(100, size=(6, 5), replace=False, chunk_size=chunk_size).execute().fetch()
        assert len(np.unique(u)) == 30 and u.min() >= 0 and u.max() < 100
        with mars.option_context({"chunk_store_limit": 64}):
            big = mt.random.choice(100, size=(6, 5), replace=False, chunk_size=chunk_size)  # by a shuffle
        assert len(np.unique(big.execute().fetch())) == 30
    whole = mt.random.choice(mt.arange(12, chunk_size=5) * 2, size=12, replace=False, chunk_size=5).execute().fetch()
    assert sorted(whole.tolist()) == list(range(0, 24, 2))
    pw = mt.random.choice(6, size=3, replace=False, p=[0.3, 0.3, 0.1, 0.1, 0.1, 0.1],
                          chunk_size=2)
    values = pw.execute().fetch()
    assert pw.nsplits == ((2, 1),) and len(set(values.tolist())) == 3
    assert mt.random.choice(5).execute().fetch().shape == ()


@pytest.mark.parametrize("population", [6, np.arange(6)], ids=["range", "tensor"])
def test_choice_without_replacement_is_uniform(population):
    seen = np.zeros((6, 2))
    if not isinstance(population, int):  # chunked population: sampled by a shuffle
        population = mt.tensor(population, chunk_size=2)
    samples = [mt.random.choice(population, size=2, replace=False, chunk_size=1) for _ in range(300)]
    mars.execute(*samples)
    for s in samples:
        for pos, v in enumerate(s.fetch()):
            seen[v, pos] += 1
    np.testing.assert_allclose(seen / 300, 1 / 6, atol=0.08)


@pytest.mark.parametrize("shape", [(7,), (9, 4), (5, 3, 2)])
def test_permutation_keeps_rows_together(shape):
    x = np.arange(np.prod(shape)).reshape(shape)
    for chunk_size in chunkings(shape):
        t = mt.random.permutation(mt.tensor(x, chunk_size=chunk_size))
        value = t.execute().fetch()
        assert value.shape == x.shape and value.dtype == x.dtype
        assert t.nsplits == mt.tensor(x, chunk_size=chunk_size).execute().nsplits
        order = value.reshape(shape[0], -1)[:, 0] // int(np.prod(shape[1:]))
        assert sorted(order.tolist()) == list(range(shape[0]))
        np.testing.assert_array_equal(value, x[order])
    p = mt.random.permutation(30, chunk_size=7).execute().fetch()
    assert sorted(p.tolist()) == list(range(30)) and p.tolist() != list(range(30))


def test_permutation_is_uniform_over_orderings():
    perms = [mt.random.permutation(3, chunk_size=1) for _ in range(600)]
    mars.execute(*perms)
    counts: dict = {}
    for p in perms:
        key = tuple(p.fetch().tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6 and min(counts.values()) > 60


class _KeepEven(TensorOperator):
    """A filter whose chunk sizes are known only after running (as after ``x[x % 2 == 0]``)."""

    @classmethod
    def tile(cls, op):
        chunks = [cls().new_chunk([c], index=c.index, shape=(math.nan,), dtype=c.dtype, order="C")
                  for c in op.inputs[0].chunks]
        return Tiled(chunks, ((math.nan,) * len(chunks),))

    def execute(self, x):
        return x[x % 2 == 0]


def test_permutation_after_a_filter_of_unknown_size():
    x = mt.arange(20, chunk_size=6)
    kept = _KeepEven().new_tensor([x.data], (math.nan,), x.dtype)
    value = mt.random.permutation(kept).execute().fetch()
    assert sorted(value.tolist()) == list(range(0, 20, 2))
    sample = mt.random.choice(kept, size=10, replace=False, chunk_size=3).execute().fetch()
    assert sorted(sample.tolist()) == list(range(0, 20, 2))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=3), st.integers(0, 2**32 - 1), st.data())
def test_any_chunking_gives_valid_samples(shape, seed, data):
    shape = tuple(shape)
    chunk = tuple(data.draw(st.integers(1, s)) for s in shape)
    rs = mt.random.RandomState(seed)
    r = rs.rand(*shape, chunk_size=chunk).execute().fetch()
    assert r.shape == shape and r.dtype == np.float64 and ((0 <= r) & (r < 1)).all()
    x = np.arange(int(np.prod(shape))).reshape(shape)
    p = rs.permutation(mt.tensor(x, chunk_size=chunk)).execute().fetch()
    rows = p.reshape(shape[0], -1)
    np.testing.assert_array_equal(np.sort(rows, axis=0), x.reshape(shape[0], -1))
    c = rs.choice(x.size, size=shape, replace=False, chunk_size=chunk).execute().fetch()
    assert sorted(c.ravel().tolist()) == list(range(x.size))
