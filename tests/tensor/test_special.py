"""mt.special: scipy.special's functions over tensors, equal to scipy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

X = np.linspace(0.05, 0.95, 12).reshape(3, 4)
Y = np.linspace(1.5, 4.0, 12).reshape(3, 4)


@pytest.mark.parametrize("chunk", chunkings((3, 4)))
@pytest.mark.parametrize("name", ["erf", "erfinv", "gammaln", "loggamma", "psi", "expit", "logit", "entr",
                                  "ndtri", "ellipk", "j0", "wofz", "log_expit", "zetac"])
def test_unary(name, chunk):
    x = X if name != "wofz" else X + 0.5j
    assert_eq(getattr(mt.special, name)(mt.tensor(x, chunk_size=chunk)), getattr(sp, name)(x))


@pytest.mark.parametrize("chunk", chunkings((3, 4)))
@pytest.mark.parametrize("name", ["gammainc", "beta", "xlogy", "rel_entr", "kl_div", "jv", "kv", "hyp0f1",
                                  "zeta", "poch", "huber", "stdtr", "chdtrc", "polygamma", "ellipkinc"])
def test_binary(name, chunk):
    a, b = (Y.round(), X) if name in ("polygamma",) else (Y, X)
    expected = getattr(sp, name)(a, b)
    assert_eq(getattr(mt.special, name)(mt.tensor(a, chunk_size=chunk), mt.tensor(b, chunk_size=2)), expected)


def test_ternary_broadcast_and_scalars():
    a = np.array([0.5, 1.0, 2.0])
    assert_eq(mt.special.betainc(mt.tensor(a, chunk_size=2), 2.0, mt.tensor(X[:, :3], chunk_size=1)),
              sp.betainc(a, 2.0, X[:, :3]))
    assert_eq(mt.special.hyp2f1(1.0, 2.0, 3.0, mt.tensor(X, chunk_size=2)), sp.hyp2f1(1.0, 2.0, 3.0, X))
    assert_eq(mt.special.elliprj(mt.tensor(Y, chunk_size=2), 1.0, 2.0, 3.0), sp.elliprj(Y, 1.0, 2.0, 3.0))
    assert_eq(mt.special.multigammaln(mt.tensor(Y, chunk_size=2), 2), sp.multigammaln(Y, 2))
    assert_eq(mt.special.zeta(mt.tensor(Y, chunk_size=2), q=mt.tensor(X, chunk_size=3)), sp.zeta(Y, q=X))


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_dtypes_follow_scipy(dtype):
    x = np.arange(1, 7).astype(dtype)
    assert_eq(mt.special.gamma(mt.tensor(x, chunk_size=4)), sp.gamma(x))
    assert_eq(mt.special.yn(mt.tensor(x.astype(np.int64), chunk_size=4), x), sp.yn(x.astype(np.int64), x))


@pytest.mark.parametrize("chunk", [1, 2, 5])
def test_multiple_outputs(chunk):
    x = np.linspace(-2, 2, 5)
    for name in ("fresnel", "airy", "sici"):
        got, want = getattr(mt.special, name)(mt.tensor(x, chunk_size=chunk)), getattr(sp, name)(x)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_eq(g, w)
    for g, w in zip(mt.special.ellipj(mt.tensor(x, chunk_size=chunk), 0.5), sp.ellipj(x, 0.5)):
        assert_eq(g, w)


def test_fused_chain_writes_into_blocks():
    x = np.linspace(-3, 3, 300_000)
    assert_eq((mt.special.erf(mt.tensor(x, chunk_size=300_000)) * 2 + 1).sum(), (sp.erf(x) * 2 + 1).sum())


def test_errors_are_scipys():
    with pytest.raises(TypeError):
        mt.special.erf(mt.ones(3), mt.ones(3))
    with pytest.raises(ValueError, match="broadcast"):
        mt.special.beta(mt.ones(3), mt.ones(4))


def test_scipy_is_not_imported_by_special():
    import subprocess
    import sys

    code = ("import sys, mars.tensor.special, mars.tensor.stats, mars.tensor.spatial.distance; "
            "print(any(m.startswith('scipy.special') or m.startswith('scipy.stats') "
            "or m.startswith('scipy.spatial') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


# ----------------------------------------------------------------- reductions
LSE = np.array([[1.0, -2.0, 3.0, 1000.0], [0.5, -np.inf, 2.0, -1.0], [-np.inf, -np.inf, -np.inf, -np.inf]])


@pytest.mark.parametrize("chunk", chunkings((3, 4)))
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_logsumexp(chunk, axis):
    t = mt.tensor(LSE, chunk_size=chunk)
    assert_eq(mt.special.logsumexp(t, axis=axis), sp.logsumexp(LSE, axis=axis))
    assert_eq(mt.special.logsumexp(t, axis=axis, keepdims=True), sp.logsumexp(LSE, axis=axis, keepdims=True))


@pytest.mark.parametrize("chunk", [1, 2, 4])
def test_logsumexp_weights_and_sign(chunk):
    a = np.array([[1.0, 2.0, 3.0, 0.5], [2.0, 1.0, -1.0, 0.0]])
    b = np.array([1.0, -2.0, 0.0, 3.0])
    t = mt.tensor(a, chunk_size=chunk)
    assert_eq(mt.special.logsumexp(t, axis=1, b=b), sp.logsumexp(a, axis=1, b=b))
    got = mt.special.logsumexp(t, axis=1, b=mt.tensor(b, chunk_size=3), return_sign=True)
    want = sp.logsumexp(a, axis=1, b=b, return_sign=True)
    assert_eq(got[0], want[0])
    assert_eq(got[1], want[1])
    value, sign = mt.special.logsumexp(mt.tensor(np.float32([1, 2]), chunk_size=1), return_sign=True)
    w_value, w_sign = sp.logsumexp(np.float32([1, 2]), return_sign=True)
    assert_eq(value, w_value, rtol=1e-6)
    assert_eq(sign, w_sign)


@pytest.mark.parametrize("chunk", chunkings((3, 4)))
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_softmax(chunk, axis):
    t = mt.tensor(X * 10, chunk_size=chunk)
    assert_eq(mt.special.softmax(t, axis=axis), sp.softmax(X * 10, axis=axis))
    assert_eq(mt.special.log_softmax(t, axis=axis), sp.log_softmax(X * 10, axis=axis))
    ints = np.arange(6).reshape(2, 3)
    assert_eq(mt.special.softmax(mt.tensor(ints, chunk_size=2), axis=axis), sp.softmax(ints, axis=axis))
