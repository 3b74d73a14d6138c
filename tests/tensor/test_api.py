"""The mars.tensor surface the issue promises is all there, and numpy calls route to it."""

from __future__ import annotations

import numpy as np

import mars.tensor as mt
from mars.tensor.methods import required_methods

FUNCTIONS = """
tensor array asarray ones zeros full empty ones_like zeros_like full_like empty_like
arange linspace eye identity diag
add subtract multiply divide true_divide floor_divide power mod negative absolute abs
sin cos tan exp log log1p sqrt square maximum minimum equal less greater logical_and
where clip astype isnan isclose around round
sum prod mean var std min max argmin argmax any all count_nonzero
nansum nanprod nanmean nanvar nanstd nanmin nanmax nanargmin nanargmax cumsum cumprod
dot matmul inner outer tensordot transpose
reshape ravel squeeze expand_dims swapaxes moveaxis concatenate stack split rechunk
""".split()

RANDOM = "rand randn randint random uniform normal choice permutation seed RandomState".split()


def test_every_promised_function_exists():
    missing = [name for name in FUNCTIONS if not callable(getattr(mt, name, None))]
    assert not missing, f"mars.tensor lacks {missing}"
    missing = [name for name in RANDOM if getattr(mt.random, name, None) is None]
    assert not missing, f"mars.tensor.random lacks {missing}"
    assert callable(mt.linalg.norm)


def test_every_promised_method_exists():
    t = mt.ones((2, 2))
    missing = [name for name in required_methods() if not hasattr(t, name)]
    assert not missing, f"Tensor lacks {missing}"


def test_numpy_functions_dispatch_to_mars():
    t = mt.ones((2, 3), chunk_size=1)
    for call in (
        lambda x: np.sum(x, axis=0), lambda x: np.mean(x), lambda x: np.transpose(x),
        lambda x: np.reshape(x, (3, 2)), lambda x: np.concatenate([x, x]), lambda x: np.linalg.norm(x),
        lambda x: np.where(x > 0, x, 0), lambda x: np.dot(x, x.T), lambda x: np.cumsum(x, axis=1),
    ):
        result = call(t)
        assert isinstance(result, mt.Tensor), call
        np.testing.assert_allclose(result.fetch(), call(np.ones((2, 3))))
