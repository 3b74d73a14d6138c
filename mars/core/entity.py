"""Tileables and chunks: the nodes of the two graph levels.

A *tileable* is a lazy whole object (a tensor; later a dataframe) with full
metadata. Tiling gives it *chunks*: blocks with an index in the chunk grid and
their own metadata. Both are produced by an :class:`~mars.core.operator.Operator`
and carry a deterministic ``key``. Sizes known only after running are NaN.

Users hold a thin :class:`Tileable` wrapper around a :class:`TileableData`;
an in-place operation (``t[0] = 1``) points the wrapper at new data, so other
expressions built from the old data are unaffected.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any, Sequence

from .session import resolve_session

if TYPE_CHECKING:
    from .operator import Operator


def has_unknown(shape: Sequence[float]) -> bool:
    return any(isinstance(s, float) and math.isnan(s) for s in shape)


class EntityData:
    """What chunks and tileables share: the op that makes them, a shape, a key."""

    __slots__ = ("op", "shape", "key", "output_index", "__weakref__")

    def __init__(self, op: Operator, shape: tuple, key: str, output_index: int = 0, **params: Any):
        self.op = op
        self.shape = shape
        self.key = key
        self.output_index = output_index
        for name, value in params.items():
            setattr(self, name, value)

    @property
    def inputs(self) -> list:
        return self.op.inputs

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __setstate__(self, state: Any) -> None:
        slots = state[1] if isinstance(state, tuple) else state
        for name, value in (slots or {}).items():
            setattr(self, name, value)
        if self.op.output_keys[self.output_index] == self.key:
            self.op.link_output(self, self.output_index)


class ChunkData(EntityData):
    """One block of a tileable: ``index`` in the chunk grid, ``shape``, and the op that makes it."""

    __slots__ = ("index",)

    def __init__(self, op: Operator, index: tuple, shape: tuple, key: str, output_index: int = 0, **params: Any):
        self.index = index
        super().__init__(op, shape, key, output_index, **params)

    def params(self) -> dict[str, Any]:
        """The metadata that an op needs to make a chunk like this one."""
        return {"index": self.index, "shape": self.shape}

    def __repr__(self) -> str:
        return f"{type(self).__name__}<op={type(self.op).__name__}, index={self.index}, key={self.key[:8]}>"


class TileableData(EntityData):
    """A lazy whole object: metadata now, chunks once tiled."""

    __slots__ = ("chunks", "nsplits")
    chunk_type: type[ChunkData] = ChunkData

    def __init__(self, op: Operator, shape: tuple, key: str, output_index: int = 0, **params: Any):
        self.chunks: list[ChunkData] | None = None
        self.nsplits: tuple[tuple, ...] | None = None
        super().__init__(op, shape, key, output_index, **params)

    @property
    def is_tiled(self) -> bool:
        return self.chunks is not None

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        assert self.nsplits is not None, "not tiled"
        return tuple(len(s) for s in self.nsplits)

    def chunk_at(self, index: tuple[int, ...]) -> ChunkData:
        """The chunk at ``index`` of the chunk grid (chunks are stored in C order)."""
        assert self.chunks is not None, "not tiled"
        flat = 0
        for i, n in zip(index, self.chunk_shape):
            flat = flat * n + i
        return self.chunks[flat]

    def params(self) -> dict[str, Any]:
        return {"shape": self.shape}

    def refresh_shape(self) -> None:
        """After some chunks ran, fill NaN sizes in ``nsplits``/``shape`` from the chunks' shapes."""
        if self.chunks is None or self.nsplits is None:
            return
        grid = self.chunk_shape
        nsplits = []
        for dim, n in enumerate(grid):
            sizes = []
            for i in range(n):
                index = tuple(i if d == dim else 0 for d in range(len(grid)))
                sizes.append(self.chunk_at(index).shape[dim])
            nsplits.append(tuple(sizes))
        self.nsplits = tuple(nsplits)
        self.shape = tuple(sum(s) if not has_unknown(s) else math.nan for s in nsplits)

    def __repr__(self) -> str:
        return f"{type(self).__name__}<op={type(self.op).__name__}, shape={self.shape}, key={self.key[:8]}>"


class Tileable:
    """The object a user holds; delegates to its current :class:`TileableData`."""

    __slots__ = ("_data", "__weakref__")

    def __init__(self, data: TileableData):
        self._data = data

    @property
    def data(self) -> TileableData:
        return self._data

    @data.setter
    def data(self, value: TileableData) -> None:
        self._data = value

    @property
    def key(self) -> str:
        return self._data.key

    @property
    def op(self) -> Operator:
        return self._data.op

    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def ndim(self) -> int:
        return len(self._data.shape)

    @property
    def inputs(self) -> list:
        return self._data.inputs

    @property
    def nsplits(self) -> tuple | None:
        """Chunk sizes along each axis, once tiled (executed); None before."""
        return self._data.nsplits

    @property
    def chunks(self) -> list | None:
        return self._data.chunks

    def execute(self, session: Any = None, wait: bool = True, **kw: Any) -> Any:
        """Run this expression; returns itself (or a future with ``wait=False``)."""
        return resolve_session(session).execute(self, wait=wait, **kw)

    def fetch(self, session: Any = None) -> Any:
        """The computed value (executing first if needed)."""
        return resolve_session(session).fetch(self)


def chunk_indexes(grid: Sequence[int]) -> itertools.product:
    """All indexes of a chunk grid, in C order."""
    return itertools.product(*(range(n) for n in grid))
