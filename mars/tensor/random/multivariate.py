"""Distributions whose every sample is a vector: multinomial, dirichlet, multivariate normal and
hypergeometric.

The sample has ``size`` (or the parameters' broadcast leading shape) plus
one trailing axis of the vector's length. Only the leading axes are chunked;
the trailing axis is always one chunk, since one vector is one draw. The
parameters are small (a vector of probabilities, a covariance matrix), so
they are numpy values carried by every chunk op; a chunk slices out of a
broadcast parameter (``multinomial``'s ``n`` and ``pvals`` may have leading
axes) the block it samples.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...core.device import to_host
from ...core.entity import chunk_indexes
from ...core.operator import Tiled
from ..chunks import normalize_chunk_sizes, offsets
from ..core import Tensor, TensorOperator, is_tensor
from .core import chunk_rng, normalize_size, out_shape

#: how many trailing axes of each parameter belong to one draw (the rest broadcast with ``size``)
CORE_NDIMS: dict[str, tuple[int, ...]] = {
    "multinomial": (0, 1),
    "dirichlet": (1,),
    "multivariate_normal": (1, 2),
    "multivariate_hypergeometric": (1, 0),
}


class TensorMultivariate(TensorOperator):
    """Vector samples of ``Generator.<method>``; chunk ops sample the rows in ``block``."""

    params = ("method", "args", "kwargs", "seed", "stream", "lead", "block", "nsplits")
    fusible = True

    @classmethod
    def tile(cls, op: TensorMultivariate) -> Tiled:
        out, lead_splits = op.outputs[0], op.nsplits[:-1]
        starts = [offsets(s) for s in lead_splits]
        chunks = []
        for stream, index in enumerate(chunk_indexes([len(s) for s in lead_splits])):
            block = tuple((starts[d][i], starts[d][i] + lead_splits[d][i]) for d, i in enumerate(index))
            shape = tuple(b - a for a, b in block) + (out.shape[-1],)
            chunk_op = op.copy(stream=stream, block=block, nsplits=None)
            chunks.append(chunk_op.new_chunk([], index=index + (0,), shape=shape, dtype=out.dtype, order="C"))
        return Tiled(chunks, op.nsplits)

    def execute(self) -> np.ndarray:
        cut = tuple(slice(a, b) for a, b in self.block)
        args = []
        for value, core in zip(self.args, CORE_NDIMS[self.method]):
            value = np.asarray(to_host(value))  # sampled on the host (on a GPU op, then moved over)
            if value.ndim > core:  # a broadcast parameter: this block's part of it
                tail = value.shape[value.ndim - core:]
                value = np.broadcast_to(value, tuple(self.lead) + tail)[cut]
            args.append(value)
        size = tuple(b - a for a, b in self.block)
        with warnings.catch_warnings():
            # numpy warned about the parameters (say, a covariance not PSD) when the tensor was built
            warnings.simplefilter("ignore", RuntimeWarning)
            return getattr(chunk_rng(self.seed, self.stream), self.method)(*args, size=size, **dict(self.kwargs))


def _host_values(args: tuple) -> tuple:
    """The parameters as numpy values (a mars tensor runs first: these parameters are small)."""
    return tuple(np.asarray(a.execute().fetch()) if is_tensor(a) else a for a in args)


def _lead_chunks(chunk_size: Any, ndim: int) -> Any:
    """``chunk_size`` for the leading axes (a full-rank spec's last entry, the vector axis, is dropped)."""
    if isinstance(chunk_size, (tuple, list)) and len(chunk_size) == ndim + 1:
        return tuple(chunk_size[:-1])
    return chunk_size


def multivariate_tensor(
    seed: int,
    checker: Any,
    method: str,
    args: tuple,
    size: Any,
    chunk_size: Any,
    kwargs: dict | None = None,
    gpu: Any = None,
) -> Tensor:
    """A tensor of ``Generator.<method>(*args, size)`` vectors, checked as ``checker.<method>`` checks."""
    kwargs = kwargs or {}
    size = normalize_size(size)
    args = _host_values(args)
    # numpy's errors and warnings (a covariance not PSD), once, at the user's call
    probe = np.asarray(getattr(checker, method)(*args, **kwargs))
    param_lead, k = probe.shape[:-1], probe.shape[-1]
    lead = out_shape(size, [param_lead])
    lead_splits = normalize_chunk_sizes(lead, _lead_chunks(chunk_size, len(lead)), probe.dtype.itemsize * max(k, 1))
    stored = tuple(np.asarray(a) if np.ndim(a) else a for a in args)
    op = TensorMultivariate(method=method, args=stored, kwargs=tuple(sorted(kwargs.items())), seed=seed,
                            stream=None, lead=lead, block=None, nsplits=lead_splits + ((k,),))
    if gpu is not None:
        op.gpu = bool(gpu)
    return op.new_tensor([], lead + (k,), probe.dtype)
