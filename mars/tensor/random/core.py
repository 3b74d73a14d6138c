"""Random tensors: seeds, per-chunk streams, and the distribution family.

A random tensor's values are fixed when it is built: it draws a seed from
its :class:`~mars.tensor.random.RandomState` and keeps it as an op
parameter. Chunk ``i`` samples from its own stream, ``SeedSequence(seed,
spawn_key=(i,))``, so chunks are independent of each other and running the
tensor (or anything built on it) again gives the same values.

Sampling uses numpy's ``Generator`` (faster than the legacy ``RandomState``
for normals and exponentials); arguments are checked at build time by the
legacy ``RandomState`` method of the same name, so errors read as numpy's.
"""

from __future__ import annotations

import operator
from typing import Any, Generator, Sequence

import numpy as np

from ...core.device import array_module
from ...core.entity import chunk_indexes, has_unknown
from ...core.operator import Tiled
from ...core.tiling import recursive_tile
from ..chunks import normalize_chunk_sizes
from ..core import INPUT, Tensor, TensorOperator, is_tensor, tensor_data
from ..datasource.core import astensor
from ..rechunk import rechunk

#: validate arguments the way numpy's np.random functions and Generator methods do (draws thrown away)
LEGACY_CHECKER = np.random.RandomState(0)
GENERATOR_CHECKER = np.random.default_rng(0)

#: valid stand-ins for tensor arguments when checking the others (default: 1)
_PROBES: dict[str, tuple] = {
    "randint": (0, 1), "integers": (0, 1), "random_integers": (0, 1), "zipf": (2.0,), "logseries": (0.5,),
    "triangular": (0.0, 0.5, 1.0),
}


def chunk_rng(seed: int, *stream: int) -> np.random.Generator:
    """The generator of one stream of a random tensor (independent of every other stream)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=stream)))


def normalize_size(size: Any) -> tuple[int, ...] | None:
    """numpy's ``size=``: None, an integer, or a sequence of integers (never negative)."""
    if size is None:
        return None
    dims = (size,) if np.ndim(size) == 0 else tuple(size)
    shape = tuple(operator.index(d) for d in dims)
    if any(d < 0 for d in shape):
        raise ValueError(f"negative dimensions are not allowed, got size {shape}")
    return shape


def out_shape(size: tuple | None, param_shapes: Sequence[tuple]) -> tuple:
    """The sample's shape: ``size``, which the parameters must broadcast to, else theirs."""
    try:
        shape = np.broadcast_shapes(*param_shapes, *([size] if size is not None else []))
    except ValueError:
        shape = None
    if shape is None or (size is not None and shape != size):
        shapes = ", ".join(str(s) for s in ([size] if size is not None else []) + list(param_shapes))
        raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape; got shapes {shapes}")
    return shape


class TensorDistribution(TensorOperator):
    """Samples of one ``Generator`` method; parameters are scalars or (in ``inputs``) tensors."""

    params = ("method", "args", "kwargs", "seed", "stream", "size", "nsplits")
    fusible = True

    @classmethod
    def tile(cls, op: TensorDistribution) -> Generator[Any, Any, Tiled]:
        out, nsplits = op.outputs[0], op.nsplits
        params = []
        for inp in op.inputs:
            # size-1 axes stay one chunk (numpy broadcasts them); others follow the output
            lead = len(nsplits) - inp.ndim
            splits = tuple((1,) if n == 1 else nsplits[lead + d] for d, n in enumerate(inp.shape))
            params.append(tensor_data((yield from recursive_tile(rechunk(inp, splits)))))
        chunks = []
        for stream, index in enumerate(chunk_indexes([len(s) for s in nsplits])):
            shape = tuple(nsplits[d][i] for d, i in enumerate(index))
            inputs = [p.chunk_at(_param_index(p, index)) for p in params]
            chunk_op = op.copy(stream=stream, size=shape, nsplits=None)
            chunks.append(chunk_op.new_chunk(inputs, index=index, shape=shape, dtype=out.dtype, order="C"))
        return Tiled(chunks, nsplits)

    def execute(self, *params: np.ndarray) -> np.ndarray:
        values = iter(params)
        args = [next(values) if a is INPUT else a for a in self.args]
        rng = device_rng(self.seed, self.stream, method=self.method) if self.gpu else None
        sample = getattr(rng if rng is not None else chunk_rng(self.seed, self.stream), self.method)
        return sample(*args, size=self.size, **dict(self.kwargs))


def device_rng(seed: int, *stream: int, method: str = "random") -> Any:
    """CuPy's generator for one stream of a GPU random tensor, or None where CuPy's lacks ``method``
    (the chunk is then sampled on the host from the CPU stream and copied over)."""
    cp = array_module(True)
    # one 64-bit seed per stream, drawn from the same SeedSequence tree as the CPU streams
    state = np.random.SeedSequence(seed, spawn_key=stream).generate_state(1, np.uint64)[0]
    rng = cp.random.default_rng(int(state))
    return rng if hasattr(rng, method) else None


def _param_index(param: Any, index: tuple) -> tuple:
    lead = len(index) - param.ndim
    return tuple(0 if n == 1 else index[lead + d] for d, n in enumerate(param.chunk_shape))


def _split_args(args: Sequence[Any]) -> tuple[list, list, list]:
    """(op args with INPUT for tensors, tensor inputs, args to check with numpy)."""
    op_args, inputs, checked = [], [], []
    for a in args:
        if is_tensor(a):
            if has_unknown(a.shape):
                raise ValueError("a random parameter's shape is not known yet; call .execute() on it first")
            op_args.append(INPUT)
            inputs.append(tensor_data(a))
            checked.append(None)
            continue
        value = np.asarray(a)
        if value.dtype.hasobject:
            raise TypeError(f"random parameters must be numbers or arrays of numbers, got {a!r}")
        if value.ndim:
            op_args.append(INPUT)
            inputs.append(tensor_data(astensor(value)))
        else:
            op_args.append(value[()])
        checked.append(a)
    return op_args, inputs, checked


def random_tensor(
    seed: int,
    legacy: str,
    method: str,
    args: Sequence[Any],
    size: Any,
    chunk_size: Any,
    kwargs: dict | None = None,
    dtype: Any = None,
    gpu: Any = None,
    checker: Any = LEGACY_CHECKER,
    check_kw: dict | None = None,
) -> Tensor:
    """A random tensor of ``Generator.<method>(*args, size)``; ``legacy`` names the method of
    ``checker`` (numpy's ``RandomState`` or ``Generator``) whose checks and dtype it follows,
    called with ``check_kw``."""
    kwargs = kwargs or {}
    size = normalize_size(size)
    op_args, inputs, checked = _split_args(args)
    probes = _PROBES.get(legacy, ())
    probes = probes if len(probes) == len(args) else (1,) * len(args)
    checked = [probes[i] if c is None else c for i, c in enumerate(checked)]
    value = getattr(checker, legacy)(*checked, **(check_kw or {}))
    if dtype is None:  # a Generator's draw of no size is a Python scalar: its dtype= is the sample's
        dtype = kwargs["dtype"] if "dtype" in kwargs else np.asarray(value).dtype
    dtype = np.dtype(dtype)
    shape = out_shape(size, [np.shape(a) if not is_tensor(a) else a.shape for a in args])
    nsplits = normalize_chunk_sizes(shape, chunk_size, dtype.itemsize)
    op = TensorDistribution(method=method, args=tuple(op_args), kwargs=tuple(sorted(kwargs.items())), seed=seed,
                            stream=None, size=None, nsplits=nsplits)
    if gpu is not None:
        op.gpu = bool(gpu)
    return op.new_tensor(inputs, shape, dtype)
