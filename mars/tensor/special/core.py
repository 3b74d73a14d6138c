"""Elementwise ops over scipy functions: one op family for ``mt.special`` and the p-values of ``mt.stats``.

An op names the scipy function it applies by a dotted path below ``scipy``
(``"special.erf"``, ``"stats.kstwo.sf"``) or holds a callable; scipy is
imported the first time such an op is built or run, never when
``mars.tensor`` is imported. Output dtypes come from calling the function on
empty arrays of the inputs' dtypes (Python scalars are passed as they are,
so NumPy's promotion rules for them hold), so dtypes and argument errors are
scipy's. Single-output ops share the elementwise family's tiling and fuse
with their neighbours; functions with several outputs (``fresnel``,
``airy``) get one op whose chunks make all outputs at once.

>>> import mars.tensor as mt
>>> mt.special.erf(mt.tensor([0.0, 1.0], chunk_size=1)).execute().fetch().round(4)
array([0.    , 0.8427])
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..arithmetic.core import (
    TensorElementwise,
    _aligned,
    _as_operand,
    _input_index,
    _known_inputs,
    _out_nsplits,
    broadcast_shapes,
)
from ..core import INPUT, Tensor, TensorData

_RESOLVED: dict[str, Any] = {}


def scipy_func(func: str | Callable) -> Callable:
    """The function at dotted path ``func`` below ``scipy`` (imported on first use), or ``func`` itself."""
    if callable(func):
        return func
    found = _RESOLVED.get(func)
    if found is None:
        module, *attrs = func.split(".")
        found = importlib.import_module(f"scipy.{module}")
        for attr in attrs:
            try:
                found = getattr(found, attr)
            except AttributeError:
                import scipy

                raise AttributeError(f"scipy.{func} does not exist in the installed scipy {scipy.__version__}") from None
        _RESOLVED[func] = found
    return found


class TensorScipyElementwise(TensorElementwise):
    """Apply ``func`` elementwise; ``operands`` and ``kwargs`` hold ``INPUT`` where an input tensor goes.

    ``kwargs`` is a tuple of ``(name, value)`` pairs (keyword tensors are inputs too,
    after the positional ones).
    """

    params = ("func", "operands", "kwargs")

    def _arguments(self, inputs: Sequence[Any]) -> tuple[list, dict]:
        it = iter(inputs)
        args = [next(it) if a is INPUT else a for a in self.operands]
        kwargs = {k: (next(it) if v is INPUT else v) for k, v in self.kwargs}
        return args, kwargs

    def execute(self, *inputs: Any) -> Any:
        args, kwargs = self._arguments(inputs)
        return scipy_func(self.func)(*args, **kwargs)

    @property
    def can_execute_into(self) -> bool:
        """A one-output scipy ufunc can write into a given buffer (fusion reuses block buffers)."""
        func = scipy_func(self.func)
        return isinstance(func, np.ufunc) and func.nout == 1 and not self.kwargs

    def execute_into(self, out: np.ndarray, *inputs: Any) -> Any:
        args, _ = self._arguments(inputs)
        return scipy_func(self.func)(*args, out=out)


class TensorScipyMultiOutput(TensorScipyElementwise):
    """A scipy function with several outputs (``fresnel``, ``airy``): each chunk op makes all of them."""

    fusible = False  # fusion carries one output per step
    blockwise = False

    @classmethod
    def tile(cls, op: TensorScipyMultiOutput) -> Generator[Any, Any, list[Tiled]]:
        outs = op.outputs
        ndim = outs[0].ndim
        inputs = yield from _known_inputs(op.inputs, ndim)
        inputs = _aligned(inputs, ndim)
        nsplits = _out_nsplits(inputs, ndim)
        chunks: list[list] = [[] for _ in outs]
        for index in np.ndindex(*[len(s) for s in nsplits]):
            ins = [inp.chunk_at(_input_index(inp, index, ndim)) for inp in inputs]
            shape = broadcast_shapes(*(c.shape for c in ins))
            kws = [dict(index=index, shape=shape, dtype=o.dtype, order=o.order) for o in outs]
            for i, chunk in enumerate(op.copy().new_chunks(ins, kws)):
                chunks[i].append(chunk)
        return [Tiled(c, nsplits) for c in chunks]


def _probe(x: Any) -> Any:
    """An empty stand-in with the same dtype (Python scalars stay as they are: they are weakly typed)."""
    if isinstance(x, TensorData):
        return np.empty((0,), dtype=x.dtype)
    return x


def infer_dtypes(func: str | Callable, operands: Sequence[Any], kwargs: Sequence[tuple[str, Any]]) -> list[np.dtype]:
    """The output dtypes of ``func`` on the operands' dtypes (scipy's own errors for bad arguments)."""
    with np.errstate(all="ignore"):
        result = scipy_func(func)(*(_probe(a) for a in operands), **{k: _probe(v) for k, v in kwargs})
    results = result if isinstance(result, tuple) else (result,)
    return [np.asarray(r).dtype for r in results]


def _check_arguments(func: str | Callable, args: Sequence[Any], kwargs: dict[str, Any]) -> None:
    if "out" in kwargs:
        raise NotImplementedError("out= is not supported by mars' scipy functions; assign the result instead")
    found = scipy_func(func)
    if isinstance(found, np.ufunc) and len(args) != found.nin:
        s = "s" if found.nin > 1 else ""
        raise TypeError(f"{found.__name__}() takes {found.nin} positional argument{s} but {len(args)} were given")


def apply_scipy(func: str | Callable, *args: Any, **kwargs: Any) -> Tensor | tuple[Tensor, ...]:
    """Build ``func(*args, **kwargs)`` lazily over tensors: a tensor, or a tuple of them for several outputs."""
    return scipy_op(func, args, kwargs)


def scipy_op(func: str | Callable, args: Sequence[Any], kwargs: dict[str, Any],
             dtypes: Sequence[Any] | None = None) -> Tensor | tuple[Tensor, ...]:
    """:func:`apply_scipy` with the output ``dtypes`` given (else found by calling ``func`` on empty arrays)."""
    _check_arguments(func, args, kwargs)
    operands = [_as_operand(a) for a in args]
    kw = tuple((k, _as_operand(v)) for k, v in kwargs.items())
    inputs = [a for a in operands if isinstance(a, TensorData)] + [v for _, v in kw if isinstance(v, TensorData)]
    dtypes = infer_dtypes(func, operands, kw) if dtypes is None else [np.dtype(d) for d in dtypes]
    shape = broadcast_shapes(*(a.shape for a in inputs)) if inputs else ()
    params = dict(
        func=func,
        operands=tuple(INPUT if isinstance(a, TensorData) else a for a in operands),
        kwargs=tuple((k, INPUT if isinstance(v, TensorData) else v) for k, v in kw),
    )
    if len(dtypes) == 1:
        return TensorScipyElementwise(**params).new_tensor(inputs, shape, dtypes[0], order="C")
    op = TensorScipyMultiOutput(**params)
    return tuple(op.new_tensors(inputs, [dict(shape=shape, dtype=d) for d in dtypes]))
