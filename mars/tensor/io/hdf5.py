"""Tensors to and from HDF5 datasets, chunk by chunk (h5py is an optional extra: ``pip install 'pymars[hdf5]'``).

HDF5 cannot take writes from several processes at once into one file
(without MPI). The writers therefore serialize on a lock file: each chunk
op takes an exclusive ``flock`` on ``<file>.lock`` (made beside the file and
left there), opens the file, writes its region and closes it. The chunks
are still produced in parallel by the workers that hold them; only the
writes queue. Reads need no lock: each chunk op opens the file read-only.
``h5py`` is imported only when one of these functions runs.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

from ..chunks import normalize_chunk_sizes
from ..core import Tensor, tensor_data
from ..datasource.core import astensor
from .core import load, store

__all__ = ["from_hdf5", "fromhdf5", "to_hdf5", "tohdf5"]


def _h5py() -> Any:
    try:
        import h5py
    except ImportError as e:
        raise ImportError("mt.to_hdf5 / mt.from_hdf5 need h5py: pip install 'pymars[hdf5]'") from e
    return h5py


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """Exclusive use of ``path`` among the processes (and threads) that take this lock."""
    if fcntl is None:
        raise NotImplementedError("mt.to_hdf5 needs POSIX file locks (fcntl); use mt.to_zarr on this platform")
    with open(path + ".lock", "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


@dataclass
class HDF5Target:
    """A dataset in an HDF5 file."""

    path: str
    dataset: str
    kwargs: dict = field(default_factory=dict)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def __mars_tokenize__(self) -> tuple:
        return ("hdf5", self.path, self.dataset, self.token)

    def store_chunks(self, shape: tuple, nsplits: tuple) -> None:
        return None  # writes are serialized: any cut of the data will do

    def create(self, shape: tuple, dtype: np.dtype, chunks: tuple[int, ...] | None) -> None:
        kwargs = dict(self.kwargs)
        with _locked(self.path), _h5py().File(self.path, "a") as f:
            if self.dataset in f:
                f.require_dataset(self.dataset, shape=shape, dtype=dtype, exact=True)  # h5py's error if it differs
                return
            f.create_dataset(self.dataset, shape=shape, dtype=dtype, **kwargs)

    def write(self, region: tuple[slice, ...], value: np.ndarray) -> None:
        with _locked(self.path), _h5py().File(self.path, "r+") as f:
            f[self.dataset][region] = value

    def read(self, region: tuple[slice, ...]) -> np.ndarray:
        with _h5py().File(self.path, "r") as f:
            return f[self.dataset][region]


def _path(path: Any) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"the HDF5 file must be given by its path (str or os.PathLike), got {type(path).__name__}: "
                        "workers open the file themselves")
    return os.path.abspath(os.fspath(path))


def _dataset_name(group: str | None, dataset: str | None) -> str:
    if not dataset:
        raise ValueError("name the dataset to use in the HDF5 file: dataset='...'")
    return "/".join(p.strip("/") for p in (group, dataset) if p)


def to_hdf5(path: Any, t: Any, dataset: str | None = None, group: str | None = None, **h5py_kwargs: Any) -> Tensor:
    """Write ``t`` into ``dataset`` of the HDF5 file at ``path``, lazily: ``.execute()`` writes.

    Each chunk is written by the worker that holds it; the writes take turns
    on a lock file ``<path>.lock`` (HDF5 takes one writer at a time). The file
    is created if missing; an existing dataset of the same shape and dtype is
    written into (another one raises h5py's ``TypeError``). Other keywords go
    to ``h5py``'s ``create_dataset`` (``chunks=``, ``compression=``, ...).
    The result has shape ``(0,) * t.ndim``.

    >>> import mars.tensor as mt, tempfile, os, shutil
    >>> path = os.path.join(tempfile.mkdtemp(), "x.h5")
    >>> _ = mt.to_hdf5(path, mt.arange(6, chunk_size=4), dataset="x").execute()
    >>> mt.from_hdf5(path, dataset="x").execute().fetch()
    array([0, 1, 2, 3, 4, 5])
    >>> shutil.rmtree(os.path.dirname(path))
    """
    data = tensor_data(astensor(t))
    return store(HDF5Target(path=_path(path), dataset=_dataset_name(group, dataset), kwargs=h5py_kwargs), data)


def from_hdf5(path: Any, dataset: str | None = None, chunk_size: Any = None, group: str | None = None) -> Tensor:
    """A tensor reading ``dataset`` of the HDF5 file at ``path`` lazily, each chunk its region.

    The shape and dtype are read now; ``chunk_size`` as in creation functions
    (by default chunks of ``mars.options.chunk_store_limit`` bytes).

    >>> import mars.tensor as mt, tempfile, os, shutil
    >>> path = os.path.join(tempfile.mkdtemp(), "y.h5")
    >>> _ = mt.to_hdf5(path, mt.ones((2, 3)), dataset="y").execute()
    >>> mt.from_hdf5(path, dataset="y", chunk_size=1).sum().execute().fetch()
    np.float64(6.0)
    >>> shutil.rmtree(os.path.dirname(path))
    """
    target = HDF5Target(path=_path(path), dataset=_dataset_name(group, dataset))
    with _h5py().File(target.path, "r") as f:
        if target.dataset not in f:
            raise KeyError(f"no dataset {target.dataset!r} in {target.path}; it has {sorted(f.keys())}")
        ds = f[target.dataset]
        shape, dtype = tuple(ds.shape), np.dtype(ds.dtype)
    return load(target, shape, dtype, normalize_chunk_sizes(shape, chunk_size, dtype.itemsize))


def tohdf5(hdf5_file: Any, x: Any, group: str | None = None, dataset: str | None = None, **kwds: Any) -> Tensor:
    """Mars's spelling of :func:`to_hdf5`: ``tohdf5(file, x, group=, dataset=)``.

    >>> import mars.tensor as mt, tempfile, os, shutil
    >>> path = os.path.join(tempfile.mkdtemp(), "z.h5")
    >>> _ = mt.tohdf5(path, mt.arange(3), group="g", dataset="d").execute()
    >>> mt.fromhdf5(path, group="g", dataset="d").execute().fetch()
    array([0, 1, 2])
    >>> shutil.rmtree(os.path.dirname(path))
    """
    return to_hdf5(hdf5_file, x, dataset=dataset, group=group, **kwds)


def fromhdf5(hdf5_file: Any, group: str | None = None, dataset: str | None = None, chunk_size: Any = None) -> Tensor:
    """Mars's spelling of :func:`from_hdf5`: ``fromhdf5(file, group=, dataset=, chunk_size=)``.

    >>> import mars.tensor as mt, tempfile, os, shutil
    >>> path = os.path.join(tempfile.mkdtemp(), "w.h5")
    >>> _ = mt.tohdf5(path, mt.arange(4), dataset="w").execute()
    >>> mt.fromhdf5(path, dataset="w", chunk_size=3).execute().fetch()
    array([0, 1, 2, 3])
    >>> shutil.rmtree(os.path.dirname(path))
    """
    return from_hdf5(hdf5_file, dataset=dataset, chunk_size=chunk_size, group=group)
