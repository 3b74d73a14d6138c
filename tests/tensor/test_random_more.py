"""mt.random's Generator (default_rng), the rest of numpy's RandomState functions, and logspace,
geomspace, ix_: numpy's dtypes, shapes and errors, values fixed by the seed and the chunking."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars
import mars.tensor as mt

# (name, args, kwargs) with the same meaning in np.random / RandomState and mt.random / RandomState
LEGACY = [
    ("f", (2, 5), {"size": 7}),
    ("noncentral_f", (2, 5, 1.5), {"size": 7}),
    ("noncentral_chisquare", (3, 2.0), {"size": (3, 3)}),
    ("hypergeometric", (7, 4, 5), {"size": 9}),
    ("logseries", (0.6,), {"size": 7}),
    ("power", (3.0,), {"size": 7}),
    ("vonmises", (0.5, 2.0), {"size": 7}),
    ("wald", (1.0, 2.0), {"size": 7}),
    ("multinomial", (10, [0.2, 0.3, 0.5]), {"size": (5, 2)}),
    ("multinomial", (4, [0.5, 0.5]), {}),
    ("dirichlet", ([1.0, 2.0, 3.0],), {"size": 7}),
    ("multivariate_normal", ([0.0, 1.0], [[2.0, 0.5], [0.5, 1.0]]), {"size": 7}),
]
# (name, args, kwargs) with the same meaning for np.random.Generator and mt.random.Generator
GENERATOR = [
    ("random", ((3, 4),), {}),
    ("random", (5,), {"dtype": np.float32}),
    ("integers", (5,), {"size": 9}),
    ("integers", (-3, 3), {"size": (2, 5), "dtype": np.int16, "endpoint": True}),
    ("integers", (0, 1), {"size": 6, "dtype": bool, "endpoint": True}),
    ("standard_normal", (7,), {"dtype": "float32"}),
    ("standard_exponential", (7,), {"method": "inv"}),
    ("standard_gamma", (2.0,), {"size": 7, "dtype": np.float32}),
    ("normal", (3, 2), {"size": 10}),
    ("uniform", (1, 4), {"size": (4, 3)}),
    ("exponential", (2.0,), {"size": 7}),
    ("poisson", (4.0,), {"size": 7}),
    ("binomial", (10, 0.3), {"size": 7}),
    ("beta", (2, 3), {"size": 7}),
    ("gamma", (2.0, 3.0), {"size": 7}),
    ("chisquare", (3,), {"size": 7}),
    ("f", (2, 5), {"size": 7}),
    ("noncentral_f", (2, 5, 1.0), {"size": 7}),
    ("noncentral_chisquare", (3, 2.0), {"size": 7}),
    ("geometric", (0.3,), {"size": 7}),
    ("hypergeometric", (7, 4, 5), {"size": 7}),
    ("logseries", (0.6,), {"size": 7}),
    ("negative_binomial", (3, 0.5), {"size": 7}),
    ("zipf", (2.0,), {"size": 7}),
    ("lognormal", (), {"size": 7}),
    ("laplace", (), {"size": 7}),
    ("logistic", (), {"size": 7}),
    ("gumbel", (), {"size": 7}),
    ("pareto", (3,), {"size": 7}),
    ("power", (3,), {"size": 7}),
    ("rayleigh", (), {"size": 7}),
    ("standard_cauchy", (7,), {}),
    ("standard_t", (3,), {"size": 7}),
    ("triangular", (0, 1, 3), {"size": 7}),
    ("vonmises", (0.5, 2.0), {"size": 7}),
    ("wald", (1.0, 2.0), {"size": 7}),
    ("weibull", (3,), {"size": 7}),
    ("multinomial", ([5, 10], [[0.5, 0.5], [0.1, 0.9]]), {}),
    ("multinomial", (3, [[0.5, 0.5], [0.2, 0.8]]), {"size": (3, 2)}),
    ("multivariate_hypergeometric", ([3, 4, 5], 6), {"size": 7}),
    ("dirichlet", ([1.0, 2.0],), {"size": (3, 2)}),
    ("multivariate_normal", ([0.0, 1.0], [[2.0, 0.5], [0.5, 1.0]]), {"size": 7, "method": "cholesky"}),
    ("choice", (5,), {"size": 7}),
    ("choice", (np.arange(12).reshape(3, 4),), {"size": 5, "axis": 1}),
    ("choice", ([1.5, 2.5, 3.5],), {"size": (2, 2), "p": [0.2, 0.3, 0.5]}),
    ("choice", (9,), {"size": 6, "replace": False}),
    ("permutation", (np.arange(12).reshape(3, 4),), {"axis": 1}),
    ("permuted", (np.arange(12).reshape(3, 4),), {"axis": 0}),
    ("permuted", (np.arange(12.0).reshape(3, 4),), {}),
    ("normal", (), {}),
]


def _same_values_again(t, first):
    """A tensor's values are fixed when it is built: a fresh session computes them again."""
    with mars.new_session() as sess:
        np.testing.assert_array_equal(sess.run(t), first)


@pytest.mark.parametrize("name, args, kw", LEGACY, ids=[f"{c[0]}-{i}" for i, c in enumerate(LEGACY)])
def test_legacy_functions_like_numpy(name, args, kw):
    expected = np.asarray(getattr(np.random, name)(*args, **kw))
    for make in (getattr(mt.random, name), getattr(mt.random.RandomState(5), name)):
        t = make(*args, chunk_size=2, **kw)
        assert t.dtype == expected.dtype and t.shape == expected.shape
        first = t.execute().fetch()
        assert first.dtype == expected.dtype and first.shape == expected.shape
        _same_values_again(t, first)


@pytest.mark.parametrize("name, args, kw", GENERATOR, ids=[f"{c[0]}-{i}" for i, c in enumerate(GENERATOR)])
def test_generator_methods_like_numpy(name, args, kw):
    expected = np.asarray(getattr(np.random.default_rng(0), name)(*args, **kw))
    t = getattr(mt.random.default_rng(0), name)(*args, **kw)
    assert t.dtype == expected.dtype and t.shape == expected.shape
    first = t.execute().fetch()
    assert first.dtype == expected.dtype and first.shape == expected.shape
    _same_values_again(t, first)


def test_generator_seed_and_chunking_fix_the_values():
    for chunk_size in chunkings((6, 5)):
        a = mt.random.default_rng(7).standard_normal((6, 5), chunk_size=chunk_size).execute().fetch()
        b = mt.random.default_rng(7).standard_normal((6, 5), chunk_size=chunk_size).execute().fetch()
        np.testing.assert_array_equal(a, b)
        assert len(np.unique(a)) == a.size
    rng = mt.random.default_rng(7)
    first, second = rng.random(20, chunk_size=6), rng.random(20, chunk_size=6)  # the generator moves on
    assert not np.array_equal(first.execute().fetch(), second.execute().fetch())
    assert not np.array_equal(mt.random.default_rng(8).random(20, chunk_size=6).execute().fetch(),
                              first.execute().fetch())
    blocks = mt.random.default_rng(1).random(40, chunk_size=10).execute().fetch().reshape(4, 10)
    assert len({tuple(b) for b in blocks}) == 4  # every chunk has a stream of its own


def test_default_rng_takes_what_numpys_takes():
    rng = mt.random.default_rng(3)
    assert mt.random.default_rng(rng) is rng
    for seed in (np.random.SeedSequence(3), mt.random.PCG64(3), np.random.default_rng(3), [3]):
        assert isinstance(mt.random.default_rng(seed), mt.random.Generator)
    same = [mt.random.default_rng(s).random(5).execute().fetch() for s in (3, np.random.SeedSequence(3))]
    np.testing.assert_array_equal(*same)
    assert isinstance(mt.random.Generator(mt.random.Philox(1)).bit_generator, mt.random.Philox)
    with pytest.raises(TypeError, match="BitGenerator"):
        mt.random.Generator(42)
    kids = rng.spawn(2)
    assert not np.array_equal(kids[0].random(5).execute().fetch(), kids[1].random(5).execute().fetch())


@pytest.mark.parametrize("call, error, match", [
    (lambda g: g.integers(5, 2), ValueError, "low >= high"),
    (lambda g: g.integers(5, dtype=float), TypeError, "Unsupported dtype"),
    (lambda g: g.integers(0, 300, dtype=np.uint8), ValueError, "high is out of bounds"),
    (lambda g: g.random(3, dtype=np.int32), TypeError, "Unsupported dtype"),
    (lambda g: g.normal(0, -1), ValueError, "scale < 0"),
    (lambda g: g.hypergeometric(2, 2, 5), ValueError, "ngood \\+ nbad < nsample"),
    (lambda g: g.logseries(1.5), ValueError, "p"),
    (lambda g: g.choice(0, 2), ValueError, "a must be a positive integer unless no samples are taken"),
    (lambda g: g.choice(2.5), ValueError, "a must be a sequence or an integer"),
    (lambda g: g.choice([]), ValueError, "a cannot be empty unless no samples are taken"),
    (lambda g: g.choice(3, p=[0.5, 0.5]), ValueError, "a and p must have same size"),
    (lambda g: g.choice(3, 4, replace=False), ValueError, "larger sample than population when replace is False"),
    (lambda g: g.choice(3, 2, replace=False, p=[1, 0, 0]), ValueError, "Fewer non-zero entries in p than size"),
    (lambda g: g.permutation(np.arange(3), axis=1), np.exceptions.AxisError, "axis 1 is out of bounds"),
    (lambda g: g.permuted(np.arange(3), axis=1), np.exceptions.AxisError, "axis 1 is out of bounds"),
    (lambda g: g.multinomial(3, [[0.5, 0.5], [0.5, 0.5]], size=3), ValueError, "shape mismatch"),
    (lambda g: g.dirichlet([-1, 1]), ValueError, "alpha < 0"),
    (lambda g: g.multivariate_normal(np.zeros((2, 3)), np.eye(3)), ValueError, "mean must be 1 dimensional"),
    (lambda g: g.multivariate_normal([0, 0], [[1]]), ValueError, "mean and cov must have same length"),
    (lambda g: g.multivariate_normal([0, 0], -np.eye(2), check_valid="raise"), ValueError, "positive-semidefinite"),
    (lambda g: g.multivariate_hypergeometric([3, 4], 8), ValueError, "nsample > sum\\(colors\\)"),
])
def test_generator_bad_arguments_raise_like_numpy(call, error, match):
    with pytest.raises(error, match=match):
        call(np.random.default_rng(0))
    with pytest.raises(error, match=match):
        call(mt.random.default_rng(0))


@pytest.mark.parametrize("call, error, match", [
    (lambda r: r.hypergeometric(2, 2, 5), ValueError, "ngood \\+ nbad < nsample"),
    (lambda r: r.dirichlet([0, 1]), ValueError, "alpha <= 0"),
    (lambda r: r.multivariate_normal([0, 0], [[1]]), ValueError, "mean and cov must have same length"),
    (lambda r: r.f(-1, 2), ValueError, "dfnum <= 0"),
    (lambda r: r.wald(1, 0), ValueError, "scale <= 0"),
    (lambda r: r.vonmises(0, -1), ValueError, "kappa < 0"),
    (lambda r: r.power(-1), ValueError, "a <= 0"),
    (lambda r: r.shuffle(mt.tensor(3) if r is mt.random else np.array(3)), TypeError, "unsized object"),
])
def test_legacy_bad_arguments_raise_like_numpy(call, error, match):
    with pytest.raises(error, match=match):
        call(np.random.RandomState(0))
    with pytest.raises(error, match=match):
        call(mt.random)


def test_out_is_rebound_with_numpys_checks():
    rng = mt.random.default_rng(0)
    out = mt.zeros((2, 3))
    assert rng.random(out=out) is out
    values = out.execute().fetch()
    assert values.shape == (2, 3) and ((values > 0) & (values < 1)).all()
    with pytest.raises(ValueError, match="size must match out.shape"):
        rng.standard_normal(4, out=mt.zeros(3))
    with pytest.raises(TypeError, match="Expected float64, got float32"):
        rng.random(out=mt.zeros(3, dtype=np.float32))
    target = mt.zeros((3, 4), dtype=np.int64)
    assert rng.permuted(mt.arange(12).reshape(3, 4), axis=1, out=target) is target
    np.testing.assert_array_equal(np.sort(target.execute().fetch(), axis=1), np.arange(12).reshape(3, 4))


@pytest.mark.parametrize("shape, axis", [((7,), 0), ((5, 4), 0), ((5, 4), 1), ((3, 4, 2), -1)])
def test_shuffle_rebinds_in_place_keeping_slices_whole(shape, axis):
    x = np.arange(np.prod(shape)).reshape(shape)
    for chunk_size in chunkings(shape):
        t = mt.tensor(x, chunk_size=chunk_size)
        if axis == 0:
            assert mt.random.shuffle(t) is None
        else:
            assert mt.random.default_rng(1).shuffle(t, axis=axis) is None
        value = t.execute().fetch()
        moved = np.moveaxis(value, axis, 0).reshape(shape[axis], -1)
        order = np.argsort(moved[:, 0])
        np.testing.assert_array_equal(moved[order], np.moveaxis(x, axis, 0).reshape(shape[axis], -1))
    with pytest.raises(TypeError, match="must be a mars Tensor"):
        mt.random.shuffle(np.arange(3))


def test_shuffle_of_a_view_reaches_its_base():
    base = mt.tensor(np.arange(20).reshape(10, 2), chunk_size=3)
    view = base[2:8]
    mt.random.RandomState(0).shuffle(view)
    value = base.execute().fetch()
    np.testing.assert_array_equal(value[:2], [[0, 1], [2, 3]])
    np.testing.assert_array_equal(value[8:], [[16, 17], [18, 19]])
    assert sorted(value[2:8, 0].tolist()) == list(range(4, 16, 2)) and value[2:8, 0].tolist() != list(range(4, 16, 2))
    np.testing.assert_array_equal(value[:, 1], value[:, 0] + 1)


def test_permuted_shuffles_each_slice_independently():
    x = np.tile(np.arange(50), (8, 1))
    value = mt.random.default_rng(0).permuted(mt.tensor(x, chunk_size=(3, 20)), axis=1).execute().fetch()
    np.testing.assert_array_equal(np.sort(value, axis=1), x)
    assert len({tuple(r) for r in value}) == 8
    flat = mt.random.default_rng(0).permuted(mt.tensor(x[:3], chunk_size=7)).execute().fetch()
    assert sorted(flat.ravel().tolist()) == sorted(x[:3].ravel().tolist())


def test_vector_samples_chunk_only_leading_axes_and_are_sane():
    t = mt.random.multinomial(20, [0.1, 0.3, 0.6], size=(6, 5), chunk_size=(4, 2, 3)).execute()
    assert t.nsplits == ((4, 2), (2, 2, 1), (3,))
    counts = t.execute().fetch()
    assert (counts.sum(axis=-1) == 20).all()
    t = mt.random.default_rng(2).multinomial(100, [0.1, 0.3, 0.6], size=20_000, chunk_size=3_000)
    np.testing.assert_allclose(t.execute().fetch().mean(axis=0), [10, 30, 60], rtol=0.02)
    d = mt.random.dirichlet([2.0, 3.0, 5.0], size=20_000, chunk_size=7_000).execute().fetch()
    np.testing.assert_allclose(d.sum(axis=1), 1.0)
    np.testing.assert_allclose(d.mean(axis=0), [0.2, 0.3, 0.5], atol=0.01)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    m = mt.random.default_rng(3).multivariate_normal([1.0, -1.0], cov, size=40_000, chunk_size=9_000).execute()
    assert m.nsplits == ((9_000,) * 4 + (4_000,), (2,))
    sample = m.execute().fetch()
    np.testing.assert_allclose(np.cov(sample.T), cov, atol=0.05)
    np.testing.assert_allclose(sample.mean(axis=0), [1.0, -1.0], atol=0.03)
    h = mt.random.default_rng(4).multivariate_hypergeometric([3, 4, 5], 6, size=(5, 2), chunk_size=2).execute()
    assert h.nsplits == ((2, 2, 1), (2,), (3,)) and (h.execute().fetch().sum(axis=-1) == 6).all()
    with pytest.warns(RuntimeWarning, match="positive-semidefinite"):
        mt.random.multivariate_normal([0, 0], [[1, 2], [2, 1]], size=3)


def test_scalar_distributions_are_sane():
    n = 100_000
    rng = mt.random.default_rng(5)
    x = rng.normal(3.0, 2.0, size=n, chunk_size=30_000).execute().fetch()
    assert abs(x.mean() - 3.0) < 0.03 and abs(x.std() - 2.0) < 0.03
    i = rng.integers(3, 8, size=n, endpoint=True, chunk_size=30_000).execute().fetch()
    assert set(np.unique(i)) == set(range(3, 9))
    h = mt.random.hypergeometric(10, 5, 6, size=n, chunk_size=30_000).execute().fetch()
    assert h.min() >= 1 and h.max() <= 6 and abs(h.mean() - 4.0) < 0.02
    w = mt.random.wald(2.0, 3.0, size=n, chunk_size=30_000).execute().fetch()
    assert abs(w.mean() - 2.0) < 0.05
    p = rng.power(3.0, size=n, chunk_size=30_000).execute().fetch()
    assert 0 <= p.min() and p.max() <= 1 and abs(p.mean() - 0.75) < 0.01


def test_random_integers_is_numpys_deprecated_inclusive_randint():
    with pytest.warns(DeprecationWarning, match=r"Please call randint\(1, 3 \+ 1\) instead"):
        t = mt.random.random_integers(3, size=3000, chunk_size=1000)
    assert t.dtype == np.random.randint(3, size=2).dtype
    assert set(np.unique(t.execute().fetch())) == {1, 2, 3}
    with pytest.warns(DeprecationWarning, match=r"Please call randint\(-2, 2 \+ 1\) instead"):
        u = mt.random.RandomState(0).random_integers(-2, 2, size=(40, 40), chunk_size=15)
    assert set(np.unique(u.execute().fetch())) == {-2, -1, 0, 1, 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(TypeError):
            mt.random.random_integers(1, np.array([3, 4]))


def test_bytes_state_and_bit_generator():
    rs = mt.random.RandomState(0)
    state = rs.get_state()
    b = rs.bytes(12)
    assert isinstance(b, bytes) and len(b) == 12
    rs.set_state(state)
    assert rs.bytes(12) == b
    assert mt.random.default_rng(1).bytes(5) == mt.random.default_rng(1).bytes(5)
    old = mt.random.get_bit_generator()
    try:
        mt.random.set_bit_generator(mt.random.MT19937(3))
        a = mt.random.rand(4)
        mt.random.set_bit_generator(mt.random.MT19937(3))
        assert mt.random.rand(4).key == a.key and isinstance(mt.random.get_bit_generator(), mt.random.MT19937)
    finally:
        mt.random.set_bit_generator(old)


@pytest.mark.parametrize("args, kw", [
    ((0, 3, 4), {}), ((2.0, 3.0, 7), {"base": 2.0}), ((0, 1, 10), {"endpoint": False}),
    ((1, 2, 5), {"dtype": np.float32}), ((1, 3, 6), {"dtype": int}), ((0, 1, 1), {}), ((0, 1, 0), {}),
])
def test_logspace_like_numpy(args, kw):
    for chunk_size in chunkings((max(args[2], 1),)):
        assert_eq(mt.logspace(*args, chunk_size=chunk_size, **kw), np.logspace(*args, **kw), rtol=0)


@pytest.mark.parametrize("args, kw", [
    ((1, 1000, 4), {}), ((-1000, -1, 4), {}), ((1j, 1000j, 4), {}), ((-1 + 0j, 1 + 0j, 5), {}),
    ((1000, 1, 4), {}), ((1, 256, 9), {"endpoint": False}), ((2, 50, 7), {"dtype": int}), ((3, 10, 2), {}),
    ((np.float32(1), np.float32(10), 5), {}), ((1, 10, 1), {}),
])
def test_geomspace_like_numpy(args, kw):
    for chunk_size in chunkings((args[2],)):
        assert_eq(mt.geomspace(*args, chunk_size=chunk_size, **kw), np.geomspace(*args, **kw), rtol=0)


def test_space_errors_like_numpy():
    with pytest.raises(ValueError, match="Geometric sequence cannot include zero"):
        mt.geomspace(0, 10)
    with pytest.raises(ValueError, match="must be non-negative"):
        mt.logspace(0, 1, -1)
    with pytest.raises(NotImplementedError, match="array arguments"):
        mt.logspace(0, 1, 4, base=[2.0, 3.0])


def test_ix_like_numpy():
    x = np.arange(30).reshape(5, 6)
    picks = ([4, 0, 2], [True, False, True, True, False, False])
    expected = np.ix_(*picks)
    for chunk_size in chunkings(x.shape):
        t = mt.tensor(x, chunk_size=chunk_size)
        numpy_args = mt.ix_(*picks)
        for got, want in zip(numpy_args, expected):
            assert_eq(got, want)
        mars_args = mt.ix_(mt.tensor(picks[0], chunk_size=2), mt.tensor(picks[1], chunk_size=4))
        assert_eq(t[mars_args], x[expected])
        assert_eq(t[numpy_args], x[expected])
    assert_eq(mt.ix_([])[0], np.ix_([])[0])
    with pytest.raises(ValueError, match="Cross index must be 1 dimensional"):
        mt.ix_([[1, 2]])
