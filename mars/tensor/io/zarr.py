"""Tensors to and from zarr arrays, chunk by chunk (zarr is an optional extra: ``pip install 'pymars[zarr]'``).

Writes are parallel and need no lock: the tensor is first cut so that each of
its chunks is exactly one zarr chunk (a regular grid: ragged chunks are cut
again), so no two workers ever write the same zarr chunk. ``zarr`` is imported
only when one of these functions runs.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..chunks import normalize_chunk_sizes
from ..core import Tensor, tensor_data
from ..datasource.core import astensor
from .core import load, store

__all__ = ["from_zarr", "fromzarr", "to_zarr", "tozarr"]


def _zarr() -> Any:
    try:
        import zarr
    except ImportError as e:
        raise ImportError("mt.to_zarr / mt.from_zarr need zarr: pip install 'pymars[zarr]'") from e
    return zarr


@dataclass
class ZarrTarget:
    """A zarr array: its store (a path, URL or zarr store) and the path of the array in it."""

    store: Any
    path: str | None = None
    overwrite: bool = False
    chunks: tuple[int, ...] | None = None
    #: the array exists already (given as a ``zarr.Array``): written into, not created
    existing: bool = False
    kwargs: dict = field(default_factory=dict)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def __mars_tokenize__(self) -> tuple:
        return ("zarr", str(self.store), self.path, self.token)

    def open(self, mode: str, **kw: Any) -> Any:
        return _zarr().open_array(store=self.store, path=self.path or "", mode=mode, **kw)

    def store_chunks(self, shape: tuple, nsplits: tuple) -> tuple[int, ...]:
        if self.chunks is not None:
            return self.chunks
        return tuple(max(max(s), 1) for s in nsplits)

    def create(self, shape: tuple, dtype: np.dtype, chunks: tuple[int, ...] | None) -> None:
        if self.existing:
            return
        self.open("w" if self.overwrite else "w-", shape=shape, chunks=chunks, dtype=dtype, **self.kwargs)

    def write(self, region: tuple[slice, ...], value: np.ndarray) -> None:
        self.open("r+")[region] = value

    def read(self, region: tuple[slice, ...]) -> np.ndarray:
        return self.open("r")[region]


def _store_of(url: Any) -> Any:
    return os.fspath(url) if isinstance(url, os.PathLike) else url


def to_zarr(t: Any, url: Any, component: str | None = None, overwrite: bool = False,
            chunks: Any = None, **zarr_kwargs: Any) -> Tensor:
    """Write ``t`` into a zarr array, lazily: ``.execute()`` writes, each chunk by the worker that holds it.

    ``url`` is a path or URL, a zarr store, or an existing ``zarr.Array`` (of
    ``t``'s shape and dtype), written into. A new array gets ``t``'s chunks
    (regularized: ragged chunks are cut to the largest) unless ``chunks``
    says otherwise; ``t`` is cut to the zarr chunks so that writes never
    share a zarr chunk. ``overwrite=True`` replaces an array already at
    ``component``; other keywords go to ``zarr.open_array`` (compressors, ...).
    The result has shape ``(0,) * t.ndim``.

    >>> import mars.tensor as mt, tempfile, os, shutil
    >>> path = os.path.join(tempfile.mkdtemp(), "x.zarr")
    >>> _ = mt.to_zarr(mt.arange(6, chunk_size=4), path).execute()
    >>> mt.from_zarr(path).execute().fetch()
    array([0, 1, 2, 3, 4, 5])
    >>> shutil.rmtree(os.path.dirname(path))
    """
    zarr = _zarr()
    data = tensor_data(astensor(t))
    if isinstance(url, zarr.Array):
        if tuple(url.shape) != tuple(data.shape) or np.dtype(url.dtype) != data.dtype:
            raise ValueError(f"the zarr array has shape {tuple(url.shape)} and dtype {url.dtype}; "
                             f"the tensor has shape {tuple(data.shape)} and dtype {data.dtype}")
        target = ZarrTarget(store=url.store, path=url.path, chunks=tuple(url.chunks), existing=True)
    else:
        if chunks is not None:
            chunks = tuple(max(s[0], 1) for s in normalize_chunk_sizes(data.shape, chunks, data.dtype.itemsize))
        target = ZarrTarget(store=_store_of(url), path=component, overwrite=overwrite, chunks=chunks,
                            kwargs=zarr_kwargs)
    return store(target, data)


def from_zarr(url: Any, component: str | None = None, chunk_size: Any = None) -> Tensor:
    """A tensor reading a zarr array lazily, each chunk its region.

    ``url`` is a path or URL, a zarr store, or a ``zarr.Array``; the chunks
    are the zarr array's own unless ``chunk_size`` says otherwise.

    >>> import mars.tensor as mt, tempfile, os, shutil
    >>> path = os.path.join(tempfile.mkdtemp(), "y.zarr")
    >>> _ = mt.to_zarr(mt.ones((2, 3), chunk_size=1), path).execute()
    >>> mt.from_zarr(path).sum().execute().fetch()
    np.float64(6.0)
    >>> shutil.rmtree(os.path.dirname(path))
    """
    zarr = _zarr()
    if isinstance(url, zarr.Array):
        array, target = url, ZarrTarget(store=url.store, path=url.path, existing=True)
    else:
        target = ZarrTarget(store=_store_of(url), path=component, existing=True)
        array = target.open("r")
    shape, dtype = tuple(array.shape), np.dtype(array.dtype)
    nsplits = normalize_chunk_sizes(shape, chunk_size if chunk_size is not None else tuple(array.chunks),
                                    dtype.itemsize)
    return load(target, shape, dtype, nsplits)


def _component(group: str | None, dataset: str | None) -> str | None:
    parts = [p.strip("/") for p in (group, dataset) if p]
    return "/".join(parts) or None


def tozarr(path: Any, x: Any, group: str | None = None, dataset: str | None = None, **zarr_kwargs: Any) -> Tensor:
    """Mars's spelling of :func:`to_zarr`: ``tozarr(path, x, group=, dataset=)``.

    >>> import mars.tensor as mt, tempfile, os, shutil
    >>> path = os.path.join(tempfile.mkdtemp(), "z.zarr")
    >>> _ = mt.tozarr(path, mt.arange(3), group="g", dataset="d").execute()
    >>> mt.fromzarr(path, group="g", dataset="d").execute().fetch()
    array([0, 1, 2])
    >>> shutil.rmtree(os.path.dirname(path))
    """
    return to_zarr(x, path, component=_component(group, dataset), **zarr_kwargs)


def fromzarr(path: Any, group: str | None = None, dataset: str | None = None, chunk_size: Any = None) -> Tensor:
    """Mars's spelling of :func:`from_zarr`: ``fromzarr(path, group=, dataset=, chunk_size=)``.

    >>> import mars.tensor as mt, tempfile, os, shutil
    >>> path = os.path.join(tempfile.mkdtemp(), "w.zarr")
    >>> _ = mt.tozarr(path, mt.arange(4)).execute()
    >>> mt.fromzarr(path, chunk_size=3).execute().fetch()
    array([0, 1, 2, 3])
    >>> shutil.rmtree(os.path.dirname(path))
    """
    return from_zarr(path, component=_component(group, dataset), chunk_size=chunk_size)
