"""HDF5 files through PyTables: ``md.read_hdf`` and ``DataFrame.to_hdf`` / ``Series.to_hdf``.

PyTables (``pip install 'pymars[hdf5]'``, imported by pandas when used) reads
local files only: a URL raises, naming the way through (copy the file, or
use Parquet). Reading makes one chunk per ``chunk_size`` rows of the stored
object (``start``/``stop``; both the ``fixed`` and ``table`` formats allow
it), with the stored index; ``where=`` (table format) is applied within
each chunk's rows, so the chunks' sizes are then known only after running.

Writing: a path with one ``*`` writes one file per partition in parallel;
a path without, one file written by one task (HDF5 files take one writer at
a time), with the partitions gathered.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ...core.tiling import as_data
from ..core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
)
from ..datasource import auto_rows
from .fs import expand_paths, file_token, is_url
from .source import SourceOp, conform
from .writers import ToFiles, WritePart, choose_how, lazy_write

__all__ = ["read_hdf"]


def _local_only(path: str, what: str) -> None:
    if is_url(path):
        raise NotImplementedError(f"{what} works on local files only (PyTables opens paths), got {path!r}; copy "
                                  "the file to local disk first (fsspec's get), or use Parquet for remote data")


class ReadHDFPart(PandasOperator):
    """Rows ``[start, stop)`` of one stored object (``where`` applied within them)."""

    params = ("path", "hdf_key", "start", "stop", "kwargs", "meta")

    def execute(self) -> Any:
        value = pd.read_hdf(self.path, self.hdf_key, start=self.start, stop=self.stop, **self.kwargs)
        where = f"rows {self.start}-{self.stop} of {self.hdf_key!r} in {self.path}"
        return conform(value, self.meta, where) if isinstance(value, pd.DataFrame) else value


class ReadHDF(SourceOp):
    """``md.read_hdf``: ``files`` are ``(path, size, mtime, key, rows)``."""

    params = ("files", "kwargs", "meta", "chunk_size")

    @classmethod
    def tile(cls, op: ReadHDF) -> Tiled:
        meta = op.meta
        chunks, rows = [], []
        filtered = op.kwargs.get("where") is not None
        for path, _, _, key, n in op.files:
            start = 0
            for size in auto_rows(meta, n, op.chunk_size) or (0,):
                part = ReadHDFPart(path=path, hdf_key=key, start=start, stop=start + size, kwargs=op.kwargs, meta=meta)
                shape = chunk_shape_of(meta, np.nan if filtered else size)
                chunks.append(part.new_chunk([], index=chunk_index_of(meta, len(chunks)), shape=shape, meta=meta))
                rows.append(np.nan if filtered else size)
                start += size
        return Tiled(chunks, nsplits_of(meta, rows))


def _stored(path: str, key: Any) -> tuple[str, int]:
    """The key (the only one, when not given, as pandas requires) and the number of rows stored under it."""
    with pd.HDFStore(path, mode="r") as store:
        if key is None:
            keys = store.keys()
            if len(keys) != 1:
                raise ValueError("key must be provided when HDF5 file contains multiple datasets.")
            key = keys[0]
        storer = store.get_storer(key)
        if storer is None:
            raise KeyError(f"No object named {key} in the file")
        n = storer.nrows if storer.is_table else storer.shape[0]
    return key, int(n or 0)


def read_hdf(path_or_buf: Any, key: Any = None, mode: str = "r", where: Any = None, columns: list | None = None,
             chunk_size: Any = None, **kwargs: Any) -> Any:
    """Read a stored DataFrame or Series from HDF5 files into a lazy one, ``chunk_size`` rows per chunk.

    Parameters
    ----------
    path_or_buf : str, os.PathLike, glob pattern, or a list of them
        Local files (the same ``key`` in each, read one after the other).
    key, where, columns, **kwargs
        As for ``pandas.read_hdf`` (``where`` and ``columns`` need the table format).
    chunk_size : int, optional
        Rows per chunk (default: sized by ``options.chunk_store_limit``).

    Returns
    -------
    DataFrame or Series
        Equal to ``pandas.read_hdf`` (of the files concatenated).

    Examples
    --------
    >>> import mars.dataframe as md
    >>> df = md.read_hdf("store.h5", "trades", chunk_size=1_000_000)  # doctest: +SKIP
    """
    if mode != "r":
        raise ValueError(f"md.read_hdf opens files read-only (mode='r'), got mode={mode!r}")
    for name in ("iterator", "chunksize", "start", "stop"):
        if kwargs.get(name):
            raise TypeError(f"md.read_hdf reads lazily in chunks of chunk_size rows: drop {name}=")
    items = list(path_or_buf) if isinstance(path_or_buf, (list, tuple)) else [path_or_buf]
    for item in items:
        _local_only(os.fspath(item), "read_hdf")
    paths = expand_paths(items)
    kwargs = {**kwargs, "where": where, "columns": columns}
    files = []
    for p in paths:
        k, n = _stored(p, key)
        files.append(file_token(p) + (k, n))
    first = files[0]
    # from some rows: read with none, the table format gives strings as object, with rows as str
    meta = pd.read_hdf(first[0], first[3], start=0, stop=min(first[4], 1000), columns=columns)
    rows = np.nan if where is not None else sum(f[4] for f in files)
    op = ReadHDF(files=tuple(files), kwargs=kwargs, meta=meta.iloc[:0], chunk_size=chunk_size)
    return op.new_pandas([], meta.iloc[:0], (rows,) + tuple(meta.shape[1:]))


# ----------------------------------------------------------------- writing
class WriteHDFPart(WritePart):
    """Partitions written to one HDF5 file with pandas (concatenated when several)."""

    def write(self, part: Any, path: Any, kwargs: dict) -> Any:
        part.to_hdf(path, **kwargs)


class ToHDF(ToFiles):
    """``to_hdf``: one file per partition, or one file written by one task."""

    writer = WriteHDFPart


def to_hdf(self: Any, path_or_buf: Any, *, key: str, name_function: Any = None, **kwargs: Any) -> DataFrame:
    """Write to HDF5 with PyTables, like ``pandas.DataFrame.to_hdf``, on the workers.

    A path with one ``*``: one file per partition, written in parallel (the
    ``*`` replaced by the partition number, or ``name_function(i)``). A path
    without: one file written by one task. Local paths only. Other keywords
    are pandas' (``mode``, ``format``, ``data_columns``, ``complevel``, ...).

    Returns
    -------
    DataFrame
        A lazy object: ``.execute()`` writes (its value is an empty DataFrame).

    Examples
    --------
    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}).to_hdf("out.h5", key="a", format="table").execute()  # doctest: +SKIP
    """
    if isinstance(path_or_buf, pd.HDFStore):
        raise TypeError("to_hdf writes on the workers, which cannot share an open HDFStore: pass the file's path")
    path = os.fspath(path_or_buf)
    _local_only(path, "to_hdf")
    how = choose_how(path, None)
    return lazy_write(as_data(self), ToHDF, {**kwargs, "key": key}, path, how, None, appendable=False,
                      name_function=name_function)


DataFrame.to_hdf = to_hdf
Series.to_hdf = to_hdf
