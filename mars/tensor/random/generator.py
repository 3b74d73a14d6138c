"""``Generator`` and ``default_rng``: numpy's Generator API, making random tensors.

A mars ``Generator`` wraps a numpy bit generator (``default_rng(seed)``
seeds a ``PCG64`` from ``SeedSequence(seed)``, as numpy does). It does not
sample values itself: each call draws a 128-bit seed from it, and chunk
``i`` of the tensor made samples from ``SeedSequence(that seed,
spawn_key=(i,))``. So the same seed and the same chunking give the same
values, and every tensor and every chunk has a stream of its own. Arguments
are checked by numpy's ``Generator`` method of the same name, so errors and
dtypes are numpy's.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..core import Tensor, is_tensor
from ..datasource.core import astensor
from ..indexing.getitem import take
from ..indexing.setitem import rebind
from . import choice as _choice
from . import permutation as _permutation
from .core import GENERATOR_CHECKER, chunk_rng, normalize_size, random_tensor
from .multivariate import multivariate_tensor

__all__ = ["Generator", "default_rng"]


def _fill(result: Tensor, out: Any) -> Tensor:
    """``out=``: ``out`` rebound to ``result`` (the shapes and dtypes were checked by numpy)."""
    if out is None:
        return result
    rebind(out, result.data)
    return out


def _out_size(out: Any, size: Any, dtype: Any) -> Any:
    """numpy's rules for ``out=`` with ``size=``; the size to sample."""
    if out is None:
        return size
    if not isinstance(out, Tensor):
        raise TypeError(f"out changes in place: it must be a mars Tensor, got {type(out).__name__}")
    if size is not None and normalize_size(size) != out.shape:
        raise ValueError("size must match out.shape when used together")
    if out.dtype != np.dtype(dtype):
        raise TypeError(f"Supplied output array has the wrong type. Expected {np.dtype(dtype)}, got {out.dtype}")
    return out.shape


class Generator:
    """A source of random tensors with numpy's ``Generator`` methods; every method takes ``chunk_size=``
    (and ``gpu=`` where ``RandomState``'s does).

    >>> import mars.tensor as mt
    >>> rng = mt.random.default_rng(42)
    >>> a = rng.standard_normal((4, 3), chunk_size=2)
    >>> b = mt.random.default_rng(42).standard_normal((4, 3), chunk_size=2)
    >>> bool((a == b).all().execute().fetch())
    True
    """

    def __init__(self, bit_generator: np.random.BitGenerator):
        if not isinstance(bit_generator, np.random.BitGenerator):
            raise TypeError(f"Generator takes a numpy BitGenerator (say np.random.PCG64(seed)), "
                            f"got {type(bit_generator).__name__}; use default_rng(seed) for a seed")
        self._host = np.random.Generator(bit_generator)

    @property
    def bit_generator(self) -> np.random.BitGenerator:
        """The numpy bit generator that the seeds of this generator's tensors are drawn from."""
        return self._host.bit_generator

    def __repr__(self) -> str:
        return f"Generator({type(self.bit_generator).__name__})"

    def spawn(self, n_children: int) -> list[Generator]:
        """``n_children`` independent generators, as ``np.random.Generator.spawn``.

        >>> import mars.tensor as mt
        >>> len(mt.random.default_rng(0).spawn(3))
        3
        """
        return [Generator(g.bit_generator) for g in self._host.spawn(n_children)]

    def _seed(self) -> int:
        return int.from_bytes(self._host.bytes(16), "little")

    def _sample(self, name: str, args: tuple, size: Any, chunk_size: Any, gpu: Any, **kwargs: Any) -> Tensor:
        return random_tensor(self._seed(), name, name, args, size, chunk_size, kwargs=kwargs, gpu=gpu,
                             checker=GENERATOR_CHECKER, check_kw=kwargs)

    def _typed(self, name: str, args: tuple, size: Any, dtype: Any, out: Any, chunk_size: Any, gpu: Any,
               **kwargs: Any) -> Tensor:
        """A method with numpy's ``dtype=`` and ``out=`` (float32 or float64 samples)."""
        size = _out_size(out, size, dtype)
        t = self._sample(name, args, size, chunk_size, gpu, dtype=np.dtype(dtype), **kwargs)
        return _fill(t, out)

    # ----------------------------------------------------------------- uniform floats and integers
    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None, chunk_size: Any = None,
               gpu: Any = None) -> Tensor:
        """Floats uniform on ``[0, 1)``, as ``Generator.random`` (``out=`` a tensor is rebound to them).

        >>> import mars.tensor as mt
        >>> mt.random.default_rng(0).random((2, 3), dtype="float32").dtype
        dtype('float32')
        """
        return self._typed("random", (), size, dtype, out, chunk_size, gpu)

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64, endpoint: bool = False,
                 chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Integers on ``[low, high)`` (``[low, high]`` with ``endpoint=True``; ``[0, low)`` without ``high``),
        as ``Generator.integers``.

        >>> import mars.tensor as mt
        >>> t = mt.random.default_rng(0).integers(1, 6, size=10, endpoint=True, chunk_size=4)
        >>> bool(((t >= 1) & (t <= 6)).all().execute().fetch())
        True
        """
        args = (low,) if high is None else (low, high)
        return self._sample("integers", args, size, chunk_size, gpu, dtype=np.dtype(dtype), endpoint=bool(endpoint))

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, chunk_size: Any = None,
                gpu: Any = None) -> Tensor:
        """Floats uniform on ``[low, high)``, as ``Generator.uniform``."""
        return self._sample("uniform", (low, high), size, chunk_size, gpu)

    # ----------------------------------------------------------------- standard distributions
    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None, chunk_size: Any = None,
                        gpu: Any = None) -> Tensor:
        """Standard normal samples, as ``Generator.standard_normal``."""
        return self._typed("standard_normal", (), size, dtype, out, chunk_size, gpu)

    def standard_exponential(self, size: Any = None, dtype: Any = np.float64, method: str = "zig", out: Any = None,
                             chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Exponential samples with scale 1, as ``Generator.standard_exponential``."""
        return self._typed("standard_exponential", (), size, dtype, out, chunk_size, gpu, method=method)

    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = np.float64, out: Any = None,
                       chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Gamma samples with scale 1, as ``Generator.standard_gamma``."""
        return self._typed("standard_gamma", (shape,), size, dtype, out, chunk_size, gpu)

    def standard_cauchy(self, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Cauchy samples, as ``Generator.standard_cauchy``."""
        return self._sample("standard_cauchy", (), size, chunk_size, gpu)

    def standard_t(self, df: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Student's t samples, as ``Generator.standard_t``."""
        return self._sample("standard_t", (df,), size, chunk_size, gpu)

    # ----------------------------------------------------------------- continuous distributions
    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, chunk_size: Any = None,
               gpu: Any = None) -> Tensor:
        """Normal samples, as ``Generator.normal`` (``loc``/``scale`` may be tensors).

        >>> import mars.tensor as mt
        >>> mt.random.default_rng(1).normal(10, 2, size=(3, 4), chunk_size=2).execute().nsplits
        ((2, 1), (2, 2))
        """
        return self._sample("normal", (loc, scale), size, chunk_size, gpu)

    def exponential(self, scale: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Exponential samples, as ``Generator.exponential``."""
        return self._sample("exponential", (scale,), size, chunk_size, gpu)

    def beta(self, a: Any, b: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Beta samples, as ``Generator.beta``."""
        return self._sample("beta", (a, b), size, chunk_size, gpu)

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Gamma samples, as ``Generator.gamma``."""
        return self._sample("gamma", (shape, scale), size, chunk_size, gpu)

    def chisquare(self, df: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Chi-square samples, as ``Generator.chisquare``."""
        return self._sample("chisquare", (df,), size, chunk_size, gpu)

    def noncentral_chisquare(self, df: Any, nonc: Any, size: Any = None, chunk_size: Any = None,
                             gpu: Any = None) -> Tensor:
        """Noncentral chi-square samples, as ``Generator.noncentral_chisquare``."""
        return self._sample("noncentral_chisquare", (df, nonc), size, chunk_size, gpu)

    def f(self, dfnum: Any, dfden: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """F samples, as ``Generator.f``."""
        return self._sample("f", (dfnum, dfden), size, chunk_size, gpu)

    def noncentral_f(self, dfnum: Any, dfden: Any, nonc: Any, size: Any = None, chunk_size: Any = None,
                     gpu: Any = None) -> Tensor:
        """Noncentral F samples, as ``Generator.noncentral_f``."""
        return self._sample("noncentral_f", (dfnum, dfden, nonc), size, chunk_size, gpu)

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, chunk_size: Any = None,
                  gpu: Any = None) -> Tensor:
        """Log-normal samples, as ``Generator.lognormal``."""
        return self._sample("lognormal", (mean, sigma), size, chunk_size, gpu)

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, chunk_size: Any = None,
                gpu: Any = None) -> Tensor:
        """Laplace samples, as ``Generator.laplace``."""
        return self._sample("laplace", (loc, scale), size, chunk_size, gpu)

    def logistic(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, chunk_size: Any = None,
                 gpu: Any = None) -> Tensor:
        """Logistic samples, as ``Generator.logistic``."""
        return self._sample("logistic", (loc, scale), size, chunk_size, gpu)

    def gumbel(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, chunk_size: Any = None,
               gpu: Any = None) -> Tensor:
        """Gumbel samples, as ``Generator.gumbel``."""
        return self._sample("gumbel", (loc, scale), size, chunk_size, gpu)

    def pareto(self, a: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Pareto II samples, as ``Generator.pareto``."""
        return self._sample("pareto", (a,), size, chunk_size, gpu)

    def power(self, a: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Power-function samples, as ``Generator.power``."""
        return self._sample("power", (a,), size, chunk_size, gpu)

    def rayleigh(self, scale: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Rayleigh samples, as ``Generator.rayleigh``."""
        return self._sample("rayleigh", (scale,), size, chunk_size, gpu)

    def triangular(self, left: Any, mode: Any, right: Any, size: Any = None, chunk_size: Any = None,
                   gpu: Any = None) -> Tensor:
        """Triangular samples, as ``Generator.triangular``."""
        return self._sample("triangular", (left, mode, right), size, chunk_size, gpu)

    def vonmises(self, mu: Any, kappa: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """von Mises samples, as ``Generator.vonmises``."""
        return self._sample("vonmises", (mu, kappa), size, chunk_size, gpu)

    def wald(self, mean: Any, scale: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Wald samples, as ``Generator.wald``."""
        return self._sample("wald", (mean, scale), size, chunk_size, gpu)

    def weibull(self, a: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Weibull samples, as ``Generator.weibull``."""
        return self._sample("weibull", (a,), size, chunk_size, gpu)

    # ----------------------------------------------------------------- discrete distributions
    def binomial(self, n: Any, p: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Binomial counts, as ``Generator.binomial`` (int64)."""
        return self._sample("binomial", (n, p), size, chunk_size, gpu)

    def negative_binomial(self, n: Any, p: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Negative binomial counts, as ``Generator.negative_binomial`` (int64)."""
        return self._sample("negative_binomial", (n, p), size, chunk_size, gpu)

    def poisson(self, lam: Any = 1.0, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Poisson counts, as ``Generator.poisson`` (int64)."""
        return self._sample("poisson", (lam,), size, chunk_size, gpu)

    def geometric(self, p: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Geometric counts, as ``Generator.geometric`` (int64)."""
        return self._sample("geometric", (p,), size, chunk_size, gpu)

    def hypergeometric(self, ngood: Any, nbad: Any, nsample: Any, size: Any = None, chunk_size: Any = None,
                       gpu: Any = None) -> Tensor:
        """Hypergeometric counts, as ``Generator.hypergeometric`` (int64)."""
        return self._sample("hypergeometric", (ngood, nbad, nsample), size, chunk_size, gpu)

    def logseries(self, p: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Logarithmic series counts, as ``Generator.logseries`` (int64)."""
        return self._sample("logseries", (p,), size, chunk_size, gpu)

    def zipf(self, a: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Zipf counts, as ``Generator.zipf`` (int64)."""
        return self._sample("zipf", (a,), size, chunk_size, gpu)

    # ----------------------------------------------------------------- vector samples
    def _vectors(self, name: str, args: tuple, size: Any, chunk_size: Any, gpu: Any, **kwargs: Any) -> Tensor:
        return multivariate_tensor(self._seed(), GENERATOR_CHECKER, name, args, size, chunk_size, kwargs, gpu=gpu)

    def multinomial(self, n: Any, pvals: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Counts over ``pvals.shape[-1]`` outcomes, as ``Generator.multinomial`` (``n`` and ``pvals``'s
        leading axes broadcast with ``size``); ``chunk_size`` cuts the leading axes only.

        >>> import mars.tensor as mt
        >>> mt.random.default_rng(0).multinomial([5, 10], [[0.5, 0.5], [0.1, 0.9]], chunk_size=1).execute().nsplits
        ((1, 1), (2,))
        """
        return self._vectors("multinomial", (n, pvals), size, chunk_size, gpu)

    def multivariate_hypergeometric(self, colors: Any, nsample: int, size: Any = None, method: str = "marginals",
                                    chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Counts of each color in ``nsample`` draws without replacement, as
        ``Generator.multivariate_hypergeometric``: shape ``size + (len(colors),)``."""
        return self._vectors("multivariate_hypergeometric", (colors, nsample), size, chunk_size, gpu, method=method)

    def dirichlet(self, alpha: Any, size: Any = None, chunk_size: Any = None, gpu: Any = None) -> Tensor:
        """Dirichlet samples, as ``Generator.dirichlet``: shape ``size + (len(alpha),)``."""
        return self._vectors("dirichlet", (alpha,), size, chunk_size, gpu)

    def multivariate_normal(self, mean: Any, cov: Any, size: Any = None, check_valid: str = "warn",
                            tol: float = 1e-8, *, method: str = "svd", chunk_size: Any = None,
                            gpu: Any = None) -> Tensor:
        """Multivariate normal samples, as ``Generator.multivariate_normal``: shape ``size + (len(mean),)``."""
        return self._vectors("multivariate_normal", (mean, cov), size, chunk_size, gpu, check_valid=check_valid,
                             tol=tol, method=method)

    def bytes(self, length: int) -> bytes:
        """``length`` random bytes, as ``Generator.bytes`` (a Python ``bytes``, drawn at once)."""
        return chunk_rng(self._seed()).bytes(length)

    # ----------------------------------------------------------------- sampling and shuffling
    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True, chunk_size: Any = None) -> Tensor:
        """A random sample of ``a`` along ``axis`` (an integer ``n`` means ``arange(n)``), as
        ``Generator.choice``. ``shuffle=False`` is accepted; the sample's order is random either way.

        >>> import mars.tensor as mt
        >>> rng = mt.random.default_rng(3)
        >>> rng.choice(mt.arange(12).reshape(3, 4), size=5, axis=1, chunk_size=2).shape
        (3, 5)
        """
        n = _check_choice(a, size, replace, p, axis)
        ndim = a.ndim if is_tensor(a) else np.ndim(a)
        if ndim <= 1:
            return _choice.choice(self._seed(), a, size=size, replace=replace, p=p, chunk_size=chunk_size)
        picks = _choice.choice(self._seed(), n, size=size, replace=replace, p=p, chunk_size=chunk_size)
        return take(astensor(a), picks, axis=axis)

    def permutation(self, x: Any, axis: int = 0, chunk_size: Any = None) -> Tensor:
        """``x`` reordered along ``axis`` (``arange(x)`` for an integer), as ``Generator.permutation``."""
        return _permutation.permutation(self._seed(), x, chunk_size=chunk_size, axis=axis)

    def permuted(self, x: Any, axis: int | None = None, out: Any = None) -> Tensor:
        """Every slice along ``axis`` shuffled on its own (the whole tensor when ``axis`` is None), as
        ``Generator.permuted``; ``out=`` a tensor is rebound to the result.

        >>> import numpy as np, mars.tensor as mt
        >>> t = mt.random.default_rng(0).permuted(mt.arange(12).reshape(3, 4), axis=1)
        >>> np.sort(t.execute().fetch(), axis=1).tolist()
        [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
        """
        return _permutation.permuted(self._seed(), x, axis=axis, out=out)

    def shuffle(self, x: Tensor, axis: int = 0) -> None:
        """Shuffle the tensor ``x`` along ``axis`` in place (``x`` is rebound, as an assignment
        rebinds it), as ``Generator.shuffle``."""
        _permutation.shuffle(self._seed(), x, axis=axis)


def _check_choice(a: Any, size: Any, replace: bool, p: Any, axis: int) -> Any:
    """numpy Generator.choice's checks of the arguments (with numpy's messages); the population size."""
    k = math.prod(normalize_size(size) or ())
    if is_tensor(a):
        if a.ndim == 0:
            raise ValueError("a must be a sequence or an integer, not a 0-d tensor")
        n = a.shape[normalize_axis_index(operator.index(axis), a.ndim)]
    else:
        if p is not None and not is_tensor(p):
            GENERATOR_CHECKER.choice(a, size=min(k, 1), p=p, axis=axis)
        else:
            GENERATOR_CHECKER.choice(a, size=min(k, 1), axis=axis)
        n = a if np.ndim(a) == 0 else np.shape(a)[axis]
    if not replace and k > n:
        raise ValueError("Cannot take a larger sample than population when replace is False")
    if not replace and p is not None and not is_tensor(p) and np.count_nonzero(np.asarray(p) > 0) < k:
        raise ValueError("Fewer non-zero entries in p than size")
    return n


def default_rng(seed: Any = None) -> Generator:
    """A :class:`Generator` seeded as ``np.random.default_rng(seed)`` seeds one (an int, a sequence
    of ints, a ``SeedSequence``, a numpy ``BitGenerator`` or ``Generator``; a mars Generator is
    returned as is).

    >>> import mars.tensor as mt
    >>> mt.random.default_rng(7).integers(10, size=3).dtype
    dtype('int64')
    """
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, np.random.Generator):
        return Generator(seed.bit_generator)
    if isinstance(seed, np.random.BitGenerator):
        return Generator(seed)
    return Generator(np.random.PCG64(seed))
