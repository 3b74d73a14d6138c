"""``RandomState``: numpy's ``np.random`` API, making random tensors.

Each call draws a fresh seed from this state's own numpy ``RandomState``, so
two calls give different tensors and seeding the state makes the calls that
follow reproducible. Every method takes ``chunk_size=``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..core import Tensor
from . import choice as _choice
from . import permutation as _permutation
from .core import LEGACY_CHECKER, chunk_rng, random_tensor
from .multivariate import multivariate_tensor


def _float_dtype(dtype: Any, name: str) -> np.dtype:
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"Unsupported dtype {dtype!r} for {name}")
    return dtype


def _dims(dn: tuple) -> tuple:
    return dn[0] if len(dn) == 1 and isinstance(dn[0], (tuple, list)) else dn


class RandomState:
    """A source of random tensors, seeded like ``np.random.RandomState``.

    >>> import mars.tensor as mt
    >>> rs = mt.random.RandomState(0)
    >>> a = rs.rand(4, chunk_size=2)
    >>> bool((a.execute().fetch() == a.execute().fetch()).all())  # values are fixed once built
    True
    """

    def __init__(self, seed: Any = None):
        self._state = np.random.RandomState(seed)

    def seed(self, seed: Any = None) -> None:
        """Reseed, so the tensors made next are reproducible."""
        self._state.seed(seed)

    def get_state(self, legacy: bool = True) -> Any:
        """The state that fixes the tensors made next (``set_state`` of it makes them again), as
        ``np.random.get_state``.

        >>> import mars.tensor as mt
        >>> rs = mt.random.RandomState(1)
        >>> state = rs.get_state()
        >>> a = rs.rand(3)
        >>> rs.set_state(state)
        >>> rs.rand(3).key == a.key
        True
        """
        return self._state.get_state(legacy=legacy)

    def set_state(self, state: Any) -> None:
        """Restore a state from :meth:`get_state`, as ``np.random.set_state``."""
        self._state.set_state(state)

    @property
    def _bit_generator(self) -> np.random.BitGenerator:
        """The numpy bit generator the seeds are drawn from (as numpy's ``RandomState._bit_generator``)."""
        return self._state._bit_generator

    def _set_bit_generator(self, bitgen: np.random.BitGenerator) -> None:
        self._state = np.random.RandomState(bitgen)

    def _seed(self) -> int:
        return int(self._state.randint(0, np.iinfo(np.int64).max, dtype=np.int64))

    def _sample(self, legacy: str, method: str, args: tuple, size: Any, chunk_size: Any, gpu: Any = None,
                **kw: Any) -> Tensor:
        return random_tensor(self._seed(), legacy, method, args, size, chunk_size, gpu=gpu, **kw)

    def _vectors(self, method: str, args: tuple, size: Any, chunk_size: Any, gpu: Any, **kwargs: Any) -> Tensor:
        return multivariate_tensor(self._seed(), LEGACY_CHECKER, method, args, size, chunk_size, kwargs, gpu=gpu)

    # ----------------------------------------------------------------- uniform floats and integers
    def random_sample(self, size: Any = None, dtype: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Floats uniform on ``[0, 1)``, as ``np.random.random_sample`` (``dtype`` float64 or float32).

        >>> import mars.tensor as mt
        >>> mt.random.random_sample((3, 2), chunk_size=2).shape
        (3, 2)
        """
        dtype = _float_dtype(dtype, "random_sample")
        return self._sample("random_sample", "random", (), size, chunk_size, gpu=gpu, kwargs={"dtype": dtype}, dtype=dtype)

    random = ranf = sample = random_sample

    def rand(self, *dn: int, dtype: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Floats uniform on ``[0, 1)`` of shape ``dn``, as ``np.random.rand``.

        >>> import mars.tensor as mt
        >>> mt.random.rand(2, 3).dtype
        dtype('float64')
        """
        return self.random_sample(_dims(dn), dtype=dtype, chunk_size=chunk_size, gpu=gpu)

    def standard_normal(self, size: Any = None, dtype: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Samples of the standard normal distribution, as ``np.random.standard_normal``.

        >>> import mars.tensor as mt
        >>> mt.random.standard_normal(5, chunk_size=2).shape
        (5,)
        """
        dtype = _float_dtype(dtype, "standard_normal")
        return self._sample("standard_normal", "standard_normal", (), size, chunk_size, gpu=gpu, kwargs={"dtype": dtype},
                            dtype=dtype)

    def randn(self, *dn: int, dtype: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Standard normal samples of shape ``dn``, as ``np.random.randn``.

        >>> import mars.tensor as mt
        >>> mt.random.randn(2, 2, chunk_size=1).shape
        (2, 2)
        """
        return self.standard_normal(_dims(dn), dtype=dtype, chunk_size=chunk_size, gpu=gpu)

    def randint(self, low: Any, high: Any = None, size: Any = None, dtype: Any = int, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Integers on ``[low, high)`` (``[0, low)`` without ``high``), as ``np.random.randint``.

        >>> import mars.tensor as mt
        >>> t = mt.random.randint(5, 10, size=4, chunk_size=2)
        >>> bool(((t >= 5) & (t < 10)).all().execute().fetch()), t.dtype
        (True, dtype('int64'))
        """
        args = (low,) if high is None else (low, high)
        dtype = np.dtype(dtype)
        return self._sample("randint", "integers", args, size, chunk_size, gpu=gpu, kwargs={"dtype": dtype},
                            check_kw={"dtype": dtype})

    def random_integers(self, low: Any, high: Any = None, size: Any = None, chunk_size: Any = None,
                        gpu: Any = None) -> Tensor:
        """Integers on ``[low, high]`` (``[1, low]`` without ``high``), as the deprecated
        ``np.random.random_integers`` (it warns, as numpy does: use ``randint``).

        >>> import warnings, mars.tensor as mt
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     t = mt.random.random_integers(3, size=5)
        >>> bool(((t >= 1) & (t <= 3)).all().execute().fetch())
        True
        """
        if high is None:
            warnings.warn(f"This function is deprecated. Please call randint(1, {low} + 1) instead",
                          DeprecationWarning, stacklevel=2)
            low, high = 1, low
        else:
            warnings.warn(f"This function is deprecated. Please call randint({low}, {high} + 1) instead",
                          DeprecationWarning, stacklevel=2)
        return self.randint(low, int(high) + 1, size=size, dtype="l", chunk_size=chunk_size, gpu=gpu)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Floats uniform on ``[low, high)``, as ``np.random.uniform``.

        >>> import mars.tensor as mt
        >>> mt.random.uniform(-1, 1, size=(2, 3)).shape
        (2, 3)
        """
        return self._sample("uniform", "uniform", (low, high), size, chunk_size, gpu=gpu)

    # ----------------------------------------------------------------- other distributions
    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Normal samples, as ``np.random.normal`` (``loc``/``scale`` may be tensors).

        >>> import mars.tensor as mt
        >>> mt.random.normal(10, 2, size=100, chunk_size=30).shape
        (100,)
        """
        return self._sample("normal", "normal", (loc, scale), size, chunk_size, gpu=gpu)

    def poisson(self, lam: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Poisson counts, as ``np.random.poisson`` (int64)."""
        return self._sample("poisson", "poisson", (lam,), size, chunk_size, gpu=gpu)

    def binomial(self, n: Any, p: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Binomial counts, as ``np.random.binomial`` (int64)."""
        return self._sample("binomial", "binomial", (n, p), size, chunk_size, gpu=gpu)

    def exponential(self, scale: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Exponential samples, as ``np.random.exponential``."""
        return self._sample("exponential", "exponential", (scale,), size, chunk_size, gpu=gpu)

    def standard_exponential(self, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Exponential samples with scale 1, as ``np.random.standard_exponential``."""
        return self._sample("standard_exponential", "standard_exponential", (), size, chunk_size, gpu=gpu)

    def beta(self, a: Any, b: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Beta samples, as ``np.random.beta``."""
        return self._sample("beta", "beta", (a, b), size, chunk_size, gpu=gpu)

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Gamma samples, as ``np.random.gamma``."""
        return self._sample("gamma", "gamma", (shape, scale), size, chunk_size, gpu=gpu)

    def standard_gamma(self, shape: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Gamma samples with scale 1, as ``np.random.standard_gamma``."""
        return self._sample("standard_gamma", "standard_gamma", (shape,), size, chunk_size, gpu=gpu)

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Log-normal samples, as ``np.random.lognormal``."""
        return self._sample("lognormal", "lognormal", (mean, sigma), size, chunk_size, gpu=gpu)

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Laplace samples, as ``np.random.laplace``."""
        return self._sample("laplace", "laplace", (loc, scale), size, chunk_size, gpu=gpu)

    def logistic(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Logistic samples, as ``np.random.logistic``."""
        return self._sample("logistic", "logistic", (loc, scale), size, chunk_size, gpu=gpu)

    def gumbel(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Gumbel samples, as ``np.random.gumbel``."""
        return self._sample("gumbel", "gumbel", (loc, scale), size, chunk_size, gpu=gpu)

    def geometric(self, p: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Geometric counts, as ``np.random.geometric`` (int64)."""
        return self._sample("geometric", "geometric", (p,), size, chunk_size, gpu=gpu)

    def chisquare(self, df: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Chi-square samples, as ``np.random.chisquare``."""
        return self._sample("chisquare", "chisquare", (df,), size, chunk_size, gpu=gpu)

    def standard_t(self, df: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Student's t samples, as ``np.random.standard_t``."""
        return self._sample("standard_t", "standard_t", (df,), size, chunk_size, gpu=gpu)

    def standard_cauchy(self, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Cauchy samples, as ``np.random.standard_cauchy``."""
        return self._sample("standard_cauchy", "standard_cauchy", (), size, chunk_size, gpu=gpu)

    def pareto(self, a: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Pareto II samples, as ``np.random.pareto``."""
        return self._sample("pareto", "pareto", (a,), size, chunk_size, gpu=gpu)

    def weibull(self, a: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Weibull samples, as ``np.random.weibull``."""
        return self._sample("weibull", "weibull", (a,), size, chunk_size, gpu=gpu)

    def rayleigh(self, scale: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Rayleigh samples, as ``np.random.rayleigh``."""
        return self._sample("rayleigh", "rayleigh", (scale,), size, chunk_size, gpu=gpu)

    def negative_binomial(self, n: Any, p: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Negative binomial counts, as ``np.random.negative_binomial`` (int64)."""
        return self._sample("negative_binomial", "negative_binomial", (n, p), size, chunk_size, gpu=gpu)

    def triangular(self, left: Any, mode: Any, right: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Triangular samples, as ``np.random.triangular``."""
        return self._sample("triangular", "triangular", (left, mode, right), size, chunk_size, gpu=gpu)

    def zipf(self, a: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Zipf counts, as ``np.random.zipf`` (int64)."""
        return self._sample("zipf", "zipf", (a,), size, chunk_size, gpu=gpu)

    def f(self, dfnum: Any, dfden: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """F (Fisher-Snedecor) samples, as ``np.random.f``."""
        return self._sample("f", "f", (dfnum, dfden), size, chunk_size, gpu=gpu)

    def noncentral_f(self, dfnum: Any, dfden: Any, nonc: Any, size: Any = None, chunk_size: Any = None,
                     gpu: Any = None) -> Tensor:
        """Noncentral F samples, as ``np.random.noncentral_f``."""
        return self._sample("noncentral_f", "noncentral_f", (dfnum, dfden, nonc), size, chunk_size, gpu=gpu)

    def noncentral_chisquare(self, df: Any, nonc: Any, size: Any = None, chunk_size: Any = None,
                             gpu: Any = None) -> Tensor:
        """Noncentral chi-square samples, as ``np.random.noncentral_chisquare``."""
        return self._sample("noncentral_chisquare", "noncentral_chisquare", (df, nonc), size, chunk_size, gpu=gpu)

    def hypergeometric(self, ngood: Any, nbad: Any, nsample: Any, size: Any = None, chunk_size: Any = None,
                       gpu: Any = None) -> Tensor:
        """Hypergeometric counts, as ``np.random.hypergeometric`` (int64).

        >>> import mars.tensor as mt
        >>> t = mt.random.hypergeometric(5, 3, 4, size=6, chunk_size=4)
        >>> bool(((t >= 1) & (t <= 4)).all().execute().fetch()), t.dtype
        (True, dtype('int64'))
        """
        return self._sample("hypergeometric", "hypergeometric", (ngood, nbad, nsample), size, chunk_size, gpu=gpu)

    def logseries(self, p: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Logarithmic series counts, as ``np.random.logseries`` (int64)."""
        return self._sample("logseries", "logseries", (p,), size, chunk_size, gpu=gpu)

    def power(self, a: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Power-function samples on ``[0, 1]``, as ``np.random.power``."""
        return self._sample("power", "power", (a,), size, chunk_size, gpu=gpu)

    def vonmises(self, mu: Any, kappa: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """von Mises samples on ``[-pi, pi]``, as ``np.random.vonmises``."""
        return self._sample("vonmises", "vonmises", (mu, kappa), size, chunk_size, gpu=gpu)

    def wald(self, mean: Any, scale: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Wald (inverse Gaussian) samples, as ``np.random.wald``."""
        return self._sample("wald", "wald", (mean, scale), size, chunk_size, gpu=gpu)

    # ----------------------------------------------------------------- vector samples
    def multinomial(self, n: Any, pvals: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Counts of ``n`` draws over ``len(pvals)`` outcomes, as ``np.random.multinomial``: shape
        ``size + (len(pvals),)``; ``chunk_size`` cuts the ``size`` axes only.

        >>> import mars.tensor as mt
        >>> t = mt.random.multinomial(10, [0.2, 0.8], size=5, chunk_size=2).execute()
        >>> t.shape, t.nsplits, t.sum(axis=1).execute().fetch().tolist()
        ((5, 2), ((2, 2, 1), (2,)), [10, 10, 10, 10, 10])
        """
        return self._vectors("multinomial", (n, pvals), size, chunk_size, gpu)

    def dirichlet(self, alpha: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Dirichlet samples (vectors summing to 1), as ``np.random.dirichlet``: shape ``size + (len(alpha),)``.

        >>> import mars.tensor as mt
        >>> mt.random.dirichlet([1.0, 2.0, 3.0], size=(4, 2), chunk_size=3).shape
        (4, 2, 3)
        """
        return self._vectors("dirichlet", (alpha,), size, chunk_size, gpu)

    def multivariate_normal(self, mean: Any, cov: Any, size: Any = None, check_valid: str = "warn", tol: float = 1e-8,
                            chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Multivariate normal samples, as ``np.random.multivariate_normal``: shape ``size + (len(mean),)``.

        >>> import mars.tensor as mt
        >>> mt.random.multivariate_normal([0.0, 1.0], [[1.0, 0.5], [0.5, 1.0]], size=7, chunk_size=3).execute().nsplits
        ((3, 3, 1), (2,))
        """
        return self._vectors("multivariate_normal", (mean, cov), size, chunk_size, gpu, check_valid=check_valid, tol=tol)

    def bytes(self, length: int) -> bytes:
        """``length`` random bytes, as ``np.random.bytes`` (a Python ``bytes``, drawn at once: it is small).

        >>> import mars.tensor as mt
        >>> len(mt.random.RandomState(0).bytes(10))
        10
        """
        return chunk_rng(self._seed()).bytes(length)

    # ----------------------------------------------------------------- sampling and shuffling
    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, chunk_size: Any = None) -> Tensor:
        """A random sample of ``a`` (an integer ``n`` means ``arange(n)``), as ``np.random.choice``.

        >>> import mars.tensor as mt
        >>> s = mt.random.choice(10, size=10, replace=False, chunk_size=3).execute().fetch()
        >>> sorted(s.tolist()) == list(range(10))
        True
        """
        return _choice.choice(self._seed(), a, size=size, replace=replace, p=p, chunk_size=chunk_size)

    def permutation(self, x: Any, chunk_size: Any = None) -> Tensor:
        """``x``'s rows in random order (``arange(x)`` for an integer), as ``np.random.permutation``.

        >>> import mars.tensor as mt
        >>> sorted(mt.random.permutation(5, chunk_size=2).execute().fetch().tolist())
        [0, 1, 2, 3, 4]
        """
        return _permutation.permutation(self._seed(), x, chunk_size=chunk_size)

    def shuffle(self, x: Tensor) -> None:
        """Shuffle the rows of the tensor ``x`` in place, as ``np.random.shuffle``: ``x`` is rebound to
        the shuffled tensor (as an assignment rebinds it) and None is returned.

        >>> import mars.tensor as mt
        >>> t = mt.arange(6, chunk_size=4)
        >>> mt.random.shuffle(t)
        >>> sorted(t.execute().fetch().tolist())
        [0, 1, 2, 3, 4, 5]
        """
        _permutation.shuffle(self._seed(), x)
