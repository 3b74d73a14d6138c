"""Tensors: ``TensorData`` (the graph node) and ``Tensor`` (what users hold)."""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from ..core.device import to_host
from ..core.entity import ChunkData, Tileable, TileableData, has_unknown
from ..core.operator import Operator
from ..core.options import options
from ..core.reprs import chunks_text, fields_html, fields_text, planned_nsplits
from ..core.session import get_default_session, resolve_session
from ..core.tiling import TILING


class _Input:
    """Placeholder in ``operands`` for the next input tensor."""

    _instance: _Input | None = None

    def __new__(cls) -> _Input:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __reduce__(self) -> str:
        return "INPUT"

    def __repr__(self) -> str:
        return "INPUT"

    def __mars_tokenize__(self) -> str:
        return "<input>"


INPUT = _Input()


class TensorChunkData(ChunkData):
    __slots__ = ("dtype", "order")

    def params(self) -> dict[str, Any]:
        return {"index": self.index, "shape": self.shape, "dtype": self.dtype, "order": self.order}


class TensorData(TileableData):
    __slots__ = ("dtype", "order")
    chunk_type = TensorChunkData

    def params(self) -> dict[str, Any]:
        return {"shape": self.shape, "dtype": self.dtype, "order": self.order}

    def issparse(self) -> bool:
        """Whether the chunks are scipy.sparse matrices (see mars.tensor.sparse)."""
        return False

    @property
    def size(self) -> float:
        return math.prod(self.shape) if self.shape else 1

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> float:
        return self.size * self.dtype.itemsize

    def assemble(self, values: list) -> Any:
        """The whole tensor from its chunks' values (in chunk order)."""
        values = [to_host(v) for v in values]  # GPU chunks come back as NumPy (see Tensor.fetch(gpu=))
        if not self.shape:
            value = values[0]
            return value if np.ndim(value) == 0 and not isinstance(value, np.ndarray) else np.asarray(value)[()]
        if len(values) == 1:
            return np.array(values[0], dtype=self.dtype, order=self.order, copy=True)
        shape = tuple(sum(s) for s in self.nsplits)
        out = np.empty(shape, dtype=self.dtype, order=self.order)
        starts = [[0] + list(np.cumsum(s)[:-1]) for s in self.nsplits]
        for chunk, value in zip(self.chunks, values):
            region = tuple(slice(starts[d][i], starts[d][i] + value.shape[d]) for d, i in enumerate(chunk.index))
            out[region] = value
        return out


class TensorOperator(Operator):
    """Base of tensor operators: outputs are tensors."""

    tileable_type = TensorData
    #: takes sparse tensors as inputs; any other op given one goes by its route in SPARSE_ROUTES
    accepts_sparse: ClassVar[bool] = False

    def new_tensor(self, inputs: list, shape: tuple, dtype: np.dtype, order: str = "C", **kw: Any) -> Tensor:
        if not self.accepts_sparse and _any_sparse(inputs):
            return _sparse_route(self)(self, inputs, shape, np.dtype(dtype), order)
        self._infer_device(inputs)
        t = Tensor(self.new_tileable(inputs, shape=tuple(shape), dtype=np.dtype(dtype), order=order, **kw))
        return maybe_eager(t)

    def _infer_device(self, inputs: list) -> None:
        """An op not told where to run runs on the GPU when any input tensor does."""
        if self.gpu is None:
            self.gpu = any(getattr(getattr(i, "op", None), "gpu", None) for i in inputs if is_tensor(i)) or None

    def new_tensors(self, inputs: list, kws: list[dict]) -> list[Tensor]:
        if not self.accepts_sparse and _any_sparse(inputs):
            _sparse_route(self, routed=False)
        self._infer_device(inputs)
        for kw in kws:
            kw.setdefault("order", "C")
            kw["dtype"] = np.dtype(kw["dtype"])
        ts = [Tensor(d) for d in self.new_tileables(inputs, kws)]
        if options.eager_mode and not TILING.get():
            resolve_session().execute(*ts)
        return ts


#: op class → ``route(op, inputs, shape, dtype, order)``, the tensor the op means when an input is
#: sparse (mars.tensor.sparse registers them); an op without a route refuses sparse inputs
SPARSE_ROUTES: dict[type, Callable[..., Any]] = {}


def _any_sparse(inputs: list) -> bool:
    return any(isinstance(i, (Tensor, TensorData)) and tensor_data(i).issparse() for i in inputs)


def _sparse_route(op: TensorOperator, routed: bool = True) -> Callable[..., Any]:
    route = SPARSE_ROUTES.get(type(op)) if routed else None
    if route is None:
        raise TypeError(f"{type(op).__name__} does not take sparse tensors; "
                        "call .todense() on the sparse input first")
    return route


class Tensor(Tileable):
    """A lazy, chunked n-dimensional array; numpy's API, run on execute()."""

    __slots__ = ()
    __array_priority__ = 100

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def order(self) -> str:
        return self._data.order

    @property
    def size(self) -> float:
        return self._data.size

    @property
    def itemsize(self) -> int:
        return self._data.dtype.itemsize

    @property
    def nbytes(self) -> float:
        return self._data.nbytes

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        if has_unknown(self.shape[:1]):
            raise ValueError("len() of a tensor whose length is not known before execution; call .execute() first")
        return int(self.shape[0])

    def __repr__(self) -> str:
        session = get_default_session()
        if session is not None and session.is_executed(self):
            return repr(session.fetch(self))  # numpy summarises a large array itself
        return fields_text("Tensor", self._repr_fields())

    def _repr_html_(self) -> str:
        session = get_default_session()
        if session is not None and session.is_executed(self):
            return "<pre>" + html.escape(repr(session.fetch(self))) + "</pre>"
        return fields_html("Tensor", self._repr_fields())

    def _repr_fields(self) -> list[tuple[str, str]]:
        """Shape, dtype and chunk sizes per axis (planned if not run yet), as ``(name, text)``."""
        shape = tuple("?" if isinstance(s, float) and math.isnan(s) else int(s) for s in self.shape)
        shape_text = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
        return [("shape", shape_text), ("dtype", str(self.dtype)), ("chunks", chunks_text(planned_nsplits(self.data))),
                ("op", type(self.op).__name__)]

    def to_numpy(self, session: Any = None) -> np.ndarray:
        return self.fetch(session=session)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self.fetch()
        value = np.asarray(value.toarray() if self._data.issparse() else value)
        return value.astype(dtype, copy=False) if dtype is not None else value

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()")
        return bool(self.fetch())

    def __float__(self) -> float:
        return float(self.fetch())

    def __int__(self) -> int:
        return int(self.fetch())

    def __index__(self) -> int:
        return int(np.asarray(self.fetch()).__index__())

    def __iter__(self):  # type: ignore[no-untyped-def]
        for i in range(len(self)):
            yield self[i]

    def __hash__(self) -> int:
        return id(self)

    def copy(self) -> Tensor:
        return Tensor(self._data)


def on_device(op: TensorOperator, gpu: Any) -> TensorOperator:
    """``op`` set to run on the GPU (``gpu=True``) or on CPUs (``False``); ``None`` leaves it to its inputs."""
    if gpu is not None:
        op.gpu = bool(gpu)
    return op


def maybe_eager(t: Tensor) -> Tensor:
    """In eager mode, run a tensor as soon as the user builds it (never while tiling)."""
    if options.eager_mode and not TILING.get():
        resolve_session().execute(t)
    return t


def is_tensor(x: Any) -> bool:
    return isinstance(x, (Tensor, TensorData))


def tensor_data(x: Any) -> TensorData:
    return x.data if isinstance(x, Tensor) else x
