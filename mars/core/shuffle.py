"""Map-reduce shuffle: every input partition sends one piece to every output partition.

A shuffle is two chunk-level stages. A :class:`ShuffleMap` op reads one input
partition and returns ``n_partitions`` pieces (it is one op with that many
output chunks); a :class:`ShuffleReduce` op for partition ``r`` reads piece
``r`` of every mapper and combines them. :func:`shuffle_chunks` wires the
two. Families that move data between partitions (a permutation, a groupby,
a hash join) subclass both stages and call it from their ``tile()``:

>>> # class HashMap(ShuffleMap):        # split rows by hash(key) % n
>>> #     def split(self, rows): ...
>>> # class ConcatReduce(ShuffleReduce):
>>> #     def combine(self, pieces): ...
>>> # out = shuffle_chunks(chunks, 4, lambda i: HashMap(), lambda r: ConcatReduce(), reduce_kws)

Each piece is read by exactly one reducer, so the executor frees it as soon
as that reducer has run, and a worker that fetched a piece from another
keeps no copy of it (:func:`piece_keys`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .entity import ChunkData
from .operator import Operator


class ShuffleMap(Operator):
    """Map stage: one input partition in, one piece per output partition out."""

    def split(self, *inputs: Any) -> Sequence[Any]:
        """The pieces for partitions ``0 .. n_partitions - 1``, in order."""
        raise NotImplementedError(f"{type(self).__name__} has no split")

    def execute(self, *inputs: Any) -> Any:
        pieces = tuple(self.split(*inputs))
        n = len(self.output_keys)
        if len(pieces) != n:
            raise ValueError(f"{type(self).__name__}.split gave {len(pieces)} pieces for {n} partitions")
        # an op with one output returns its value, not a 1-tuple
        return pieces if len(pieces) != 1 else pieces[0]


class ShuffleReduce(Operator):
    """Reduce stage: the pieces every mapper made for one partition in, one chunk out."""

    def combine(self, pieces: list[Any]) -> Any:
        """This partition's value from its pieces (in mapper order)."""
        raise NotImplementedError(f"{type(self).__name__} has no combine")

    def execute(self, *pieces: Any) -> Any:
        return self.combine(list(pieces))


def piece_keys(op: Any, input_keys: Sequence[str]) -> frozenset[str]:
    """The keys among ``input_keys`` that the subtask op ``op`` reads as shuffle pieces.

    A piece has one reader, its reducer: a worker that fetched one from
    another worker has no later use for a copy. ``op`` is a reducer, or a
    fused op (``steps``) some of whose steps are reducers.

    Examples
    --------
    >>> piece_keys(ShuffleReduce(), ["a", "b"]) == {"a", "b"}
    True
    >>> piece_keys(Operator(), ["a"])
    frozenset()
    """
    if isinstance(op, ShuffleReduce):
        return frozenset(input_keys)
    steps = getattr(op, "steps", None)
    if not steps:
        return frozenset()
    wanted = set(input_keys)
    return frozenset(k for step in steps if isinstance(step.op, ShuffleReduce) for k in step.input_keys if k in wanted)


def _default_piece_meta(mapper: int, partition: int) -> dict:
    return {"index": (mapper, partition), "shape": (math.nan,)}


def shuffle_chunks(
    map_inputs: Sequence[ChunkData | Sequence[ChunkData]],
    n_partitions: int,
    make_map_op: Callable[[int], ShuffleMap],
    make_reduce_op: Callable[[int], ShuffleReduce],
    reduce_kws: Sequence[dict],
    piece_kws: Callable[[int, int], dict] = _default_piece_meta,
) -> list[ChunkData]:
    """Wire a shuffle; returns the reducers' chunks, one per partition.

    Parameters
    ----------
    map_inputs
        Per mapper, its input chunk (or list of input chunks).
    n_partitions
        How many output partitions (reducers) there are.
    make_map_op, make_reduce_op
        The op of mapper ``i`` / reducer ``r`` (not yet applied to chunks).
    reduce_kws
        Metadata (``index``, ``shape``, ...) of reducer ``r``'s output chunk.
    piece_kws
        Metadata of the piece mapper ``i`` makes for partition ``r``; by
        default index ``(i, r)`` and an unknown size.

    Examples
    --------
    >>> # reducer r reads output r of every mapper:
    >>> # [c.output_index for c in shuffle_chunks(...)[r].inputs] == [r] * len(map_inputs)
    """
    if n_partitions < 1:
        raise ValueError(f"a shuffle needs at least one partition, got n_partitions={n_partitions}")
    if len(reduce_kws) != n_partitions:
        raise ValueError(f"reduce_kws has {len(reduce_kws)} entries for {n_partitions} partitions")
    pieces = []
    for i, inputs in enumerate(map_inputs):
        inputs = [inputs] if isinstance(inputs, ChunkData) else list(inputs)
        pieces.append(make_map_op(i).new_chunks(inputs, [piece_kws(i, r) for r in range(n_partitions)]))
    return [
        make_reduce_op(r).new_chunk([p[r] for p in pieces], **reduce_kws[r])
        for r in range(n_partitions)
    ]
