"""``mt.fft``'s transforms, under numpy's names and signatures (see ``core`` for how they run)."""

from __future__ import annotations

from typing import Any

from ..core import Tensor
from .core import transform

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
           "irfftn", "hfft", "ihfft"]


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Tensor:
    """The 1-D discrete Fourier transform along ``axis``, as ``np.fft.fft``.

    ``n`` crops or zero-pads the axis first; ``norm`` is ``"backward"``
    (default), ``"ortho"`` or ``"forward"``.

    >>> import mars.tensor as mt
    >>> mt.fft.fft(mt.ones(4, chunk_size=2)).execute().fetch()
    array([4.+0.j, 0.+0.j, 0.+0.j, 0.+0.j])
    """
    return transform("fft", a, n, axis, norm, out)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Tensor:
    """The 1-D inverse discrete Fourier transform along ``axis``, as ``np.fft.ifft``.

    >>> import mars.tensor as mt
    >>> mt.fft.ifft(mt.tensor([4, 0, 0, 0])).execute().fetch()
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return transform("ifft", a, n, axis, norm, out)


def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None) -> Tensor:
    """The 2-D discrete Fourier transform over ``axes``, as ``np.fft.fft2``.

    >>> import mars.tensor as mt
    >>> mt.fft.fft2(mt.ones((2, 2))).execute().fetch()
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    return transform("fft2", a, s, axes, norm, out)


def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None) -> Tensor:
    """The 2-D inverse discrete Fourier transform over ``axes``, as ``np.fft.ifft2``.

    >>> import mars.tensor as mt
    >>> mt.fft.ifft2(mt.tensor([[4, 0], [0, 0]])).execute().fetch()
    array([[1.+0.j, 1.+0.j],
           [1.+0.j, 1.+0.j]])
    """
    return transform("ifft2", a, s, axes, norm, out)


def fftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> Tensor:
    """The N-D discrete Fourier transform over ``axes`` (all by default), as ``np.fft.fftn``.

    >>> import mars.tensor as mt
    >>> mt.fft.fftn(mt.ones((2, 2, 2), chunk_size=1)).sum().execute().fetch()
    np.complex128(8+0j)
    """
    return transform("fftn", a, s, axes, norm, out)


def ifftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> Tensor:
    """The N-D inverse discrete Fourier transform over ``axes``, as ``np.fft.ifftn``.

    >>> import mars.tensor as mt
    >>> mt.fft.ifftn(mt.ones((2, 2, 2))).sum().execute().fetch()
    np.complex128(1+0j)
    """
    return transform("ifftn", a, s, axes, norm, out)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Tensor:
    """The 1-D transform of real input (the ``n // 2 + 1`` non-negative frequencies), as ``np.fft.rfft``.

    >>> import mars.tensor as mt
    >>> mt.fft.rfft(mt.arange(4.0)).execute().fetch()
    array([ 6.+0.j, -2.+2.j, -2.+0.j])
    """
    return transform("rfft", a, n, axis, norm, out)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Tensor:
    """The inverse of ``rfft``: real output of length ``n`` (``2 * (m - 1)`` by default), as ``np.fft.irfft``.

    >>> import mars.tensor as mt
    >>> mt.fft.irfft(mt.tensor([6, -2 + 2j, -2])).execute().fetch()
    array([0., 1., 2., 3.])
    """
    return transform("irfft", a, n, axis, norm, out)


def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None) -> Tensor:
    """The 2-D transform of real input, as ``np.fft.rfft2``.

    >>> import mars.tensor as mt
    >>> mt.fft.rfft2(mt.ones((2, 4))).shape
    (2, 3)
    """
    return transform("rfft2", a, s, axes, norm, out)


def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None) -> Tensor:
    """The inverse of ``rfft2``, as ``np.fft.irfft2``.

    >>> import mars.tensor as mt
    >>> mt.fft.irfft2(mt.tensor([[4, 0], [0, 0]])).execute().fetch()
    array([[1., 1.],
           [1., 1.]])
    """
    return transform("irfft2", a, s, axes, norm, out)


def rfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> Tensor:
    """The N-D transform of real input (the last axis halved), as ``np.fft.rfftn``.

    >>> import mars.tensor as mt
    >>> mt.fft.rfftn(mt.ones((2, 2, 4))).shape
    (2, 2, 3)
    """
    return transform("rfftn", a, s, axes, norm, out)


def irfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None) -> Tensor:
    """The inverse of ``rfftn``, as ``np.fft.irfftn``.

    >>> import mars.tensor as mt
    >>> mt.fft.irfftn(mt.ones((2, 2, 3))).shape
    (2, 2, 4)
    """
    return transform("irfftn", a, s, axes, norm, out)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Tensor:
    """The transform of a signal with Hermitian symmetry (real spectrum), as ``np.fft.hfft``.

    >>> import mars.tensor as mt
    >>> mt.fft.hfft(mt.tensor([1, 2, 3])).execute().fetch()
    array([ 8., -2.,  0., -2.])
    """
    return transform("hfft", a, n, axis, norm, out)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Tensor:
    """The inverse of ``hfft``: ``n // 2 + 1`` complex values from real input, as ``np.fft.ihfft``.

    >>> import mars.tensor as mt
    >>> mt.fft.ihfft(mt.tensor([1.0, 2, 3, 4])).shape
    (3,)
    """
    return transform("ihfft", a, n, axis, norm, out)
