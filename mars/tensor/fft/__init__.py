"""mt.fft: ``numpy.fft`` over chunked tensors (transforms, sample frequencies, shifts).

>>> import mars.tensor as mt
>>> mt.fft.irfft(mt.fft.rfft(mt.arange(4.0))).execute().fetch()
array([0., 1., 2., 3.])
"""

from __future__ import annotations

from .helper import fftfreq, fftshift, ifftshift, rfftfreq
from .transforms import (
    fft, fft2, fftn, hfft, ifft, ifft2, ifftn, ihfft, irfft, irfft2, irfftn, rfft, rfft2, rfftn,
)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
           "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
