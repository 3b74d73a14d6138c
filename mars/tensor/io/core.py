"""Chunked, lazy storage of tensors: the ops shared by the zarr and HDF5 formats.

A format is a small picklable *target* (a dataclass naming the file or store
and the array in it) with ``create(shape, dtype, chunks)``, ``write(region,
value)`` and ``read(region)``; the ops here carry it to the workers:

- ``TensorStore`` (what ``to_zarr``/``to_hdf5`` return) tiles into one
  ``StoreCreate`` chunk (makes the array, once) and one ``StoreWriteChunk``
  per chunk of the data, each taking the create chunk and its data chunk as
  inputs. So every chunk is written by the worker that holds it, after the
  array exists, in parallel with the others. The result has shape
  ``(0,) * ndim``: running it writes, fetching it gives an empty array.
- ``TensorLoad`` (what ``from_zarr``/``from_hdf5`` return) is a source of one
  chunk op per region; each reads its region where it runs.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Protocol

import numpy as np

from ...core.operator import Tiled
from ..base.reshape import known_sizes, rechunked
from ..chunks import offsets
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor, grid_tile


class Target(Protocol):
    """Where a tensor is stored; a picklable value that the chunk ops carry."""

    def store_chunks(self, shape: tuple, nsplits: tuple) -> tuple[int, ...] | None:
        """The storage's chunk shape for data cut as ``nsplits`` (None: the format's default)."""

    def create(self, shape: tuple, dtype: np.dtype, chunks: tuple[int, ...] | None) -> None: ...

    def write(self, region: tuple[slice, ...], value: np.ndarray) -> None: ...

    def read(self, region: tuple[slice, ...]) -> np.ndarray: ...


def regular_splits(length: int, size: int) -> tuple[int, ...]:
    """``length`` cut into chunks of ``size`` (the last one shorter), as a regular chunk grid has it."""
    if length == 0:
        return (0,)
    return (size,) * (length // size) + ((length % size,) if length % size else ())


def is_regular(splits: tuple[int, ...]) -> bool:
    """Whether ``splits`` is a regular grid: equal chunks, the last one no larger."""
    return all(s == splits[0] for s in splits[:-1]) and splits[-1] <= splits[0]


class TensorStore(TensorOperator):
    """Write the input tensor into ``target``, chunk by chunk, each where its data is."""

    params = ("target",)

    @classmethod
    def tile(cls, op: TensorStore) -> Generator[Any, Any, Tiled]:
        yield from known_sizes(op.inputs)
        inp, target = op.inputs[0], op.target
        shape = tuple(int(s) for s in inp.shape)
        chunks = target.store_chunks(shape, inp.nsplits)
        if chunks is not None:  # every data chunk is exactly one storage chunk: writes never overlap
            inp = yield from rechunked(inp, tuple(regular_splits(n, c) for n, c in zip(shape, chunks)))
        created = StoreCreate(target=target, shape=shape, dtype=inp.dtype, chunks=chunks).new_chunk(
            [], index=(0,) * inp.ndim, shape=(0,) * inp.ndim, dtype=inp.dtype, order="C")
        starts = [offsets(s) for s in inp.nsplits]
        written = []
        for c in inp.chunks:
            region = tuple(slice(starts[d][i], starts[d][i] + c.shape[d]) for d, i in enumerate(c.index))
            written.append(StoreWriteChunk(target=target, region=region).new_chunk(
                [created, c], index=c.index, shape=(0,) * inp.ndim, dtype=inp.dtype, order="C"))
        return Tiled(written, tuple((0,) * len(s) for s in inp.nsplits))


class StoreCreate(TensorOperator):
    """Make the array in the target (before any chunk is written)."""

    params = ("target", "shape", "dtype", "chunks")

    def execute(self) -> np.ndarray:
        self.target.create(self.shape, self.dtype, self.chunks)
        return np.empty((0,) * len(self.shape), dtype=self.dtype)


class StoreWriteChunk(TensorOperator):
    """Write one chunk into its region of the target's array."""

    params = ("target", "region")

    def execute(self, created: np.ndarray, value: np.ndarray) -> np.ndarray:
        value = np.asarray(value)
        if value.size:
            self.target.write(self.region, value)
        return np.empty((0,) * value.ndim, dtype=value.dtype)


def store(target: Any, t: Any) -> Tensor:
    """The lazy write of ``t`` into ``target``: ``.execute()`` writes it."""
    data = tensor_data(astensor(t))
    if data.issparse():
        raise TypeError("storing a sparse tensor is not supported; call .todense() on it first")
    op = TensorStore(target=target)
    return op.new_tensor([data], (0,) * data.ndim, data.dtype)


class TensorLoad(TensorOperator):
    """An array in a target, read lazily: each chunk op reads its ``region``."""

    params = ("target", "nsplits", "region")

    @classmethod
    def tile(cls, op: TensorLoad) -> Tiled:
        return grid_tile(op, lambda index, slices, shape: op.copy(nsplits=None, region=slices))

    def execute(self) -> np.ndarray:
        return np.asarray(self.target.read(self.region))


def load(target: Any, shape: tuple, dtype: np.dtype, nsplits: tuple) -> Tensor:
    """A tensor of ``shape`` and ``dtype`` whose chunks (cut as ``nsplits``) read ``target`` when run."""
    op = TensorLoad(target=target, nsplits=nsplits, region=None)
    return op.new_tensor([], shape, dtype)
