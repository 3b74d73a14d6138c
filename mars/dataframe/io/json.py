"""JSON files: ``md.read_json`` and ``DataFrame.to_json`` / ``Series.to_json``.

Line-delimited JSON (``lines=True``, uncompressed) is cut into byte ranges of
at most ``chunk_bytes`` on line boundaries, as CSV is, and each range is
parsed by ``pandas.read_json``; other JSON (one document per file: records,
columns, split, ...) is read one file per chunk. The metadata is pandas'
reading of the start of the first file (its first ``sample_bytes`` of lines;
a whole document otherwise); chunks that come out with another dtype are
made to agree where that is lossless, or fail naming the column. Rows get
``0..n-1`` across chunks and files where pandas numbers them (lines,
``orient="records"`` or ``"values"``); other orients carry their index.
"""

from __future__ import annotations

import io
import itertools
import os
from collections.abc import Generator
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
from ..rows import renumber_rows
from .csv import _BY_EXTENSION, _cuts, _line_start
from .fs import expand_paths, file_size, file_token, is_url, local_path, open_file
from .source import SourceOp, conform, parse_bytes
from .writers import ToFiles, WritePart, choose_how, lazy_write, text_of

__all__ = ["read_json"]

_SAMPLE_BYTES = 256_000


def _compression(path: str, kwargs: dict) -> Any:
    compression = kwargs.get("compression", "infer")
    if compression == "infer":
        return next((c for e, c in _BY_EXTENSION.items() if path.lower().endswith(e)), None)
    return compression


def _read_whole(path: str, kwargs: dict, storage_options: dict | None, **extra: Any) -> pd.DataFrame:
    kw = {**kwargs, **extra, "compression": _compression(path, kwargs)}
    if not is_url(path):
        return pd.read_json(local_path(path), **kw)
    with open_file(path, "rb", storage_options) as f:
        return pd.read_json(f, **kw)


def _read_lines(data: bytes, kwargs: dict) -> pd.DataFrame:
    kw = {k: v for k, v in kwargs.items() if k not in ("compression", "lines")}
    return pd.read_json(io.BytesIO(data), lines=True, **kw)


class ReadJSONRange(PandasOperator):
    """Lines of one file that start in bytes ``[start, end)``; ``end=None``: the whole file."""

    params = ("path", "start", "end", "kwargs", "meta", "storage_options")

    def execute(self) -> pd.DataFrame:
        if self.end is None:
            return conform(_read_whole(self.path, self.kwargs, self.storage_options), self.meta, f"file {self.path}")
        with open_file(self.path, "rb", self.storage_options) as f:
            size = f.seek(0, os.SEEK_END)
            begin = _line_start(f, self.start, b"\n")
            stop = size if self.end >= size else _line_start(f, self.end, b"\n")
            f.seek(begin)
            data = f.read(stop - begin)
        if not data.strip():
            return self.meta.copy()
        return conform(_read_lines(data, self.kwargs), self.meta, f"bytes {begin}-{stop} of {self.path}")


class ReadJSONHead(PandasOperator):
    """The first ``nrows`` lines of the files, read in order (pandas' ``nrows``, lines only)."""

    params = ("paths", "kwargs", "nrows", "meta", "storage_options")

    def execute(self) -> pd.DataFrame:
        parts, left = [], self.nrows
        for path in self.paths:
            df = _read_whole(path, self.kwargs, self.storage_options, nrows=left)
            parts.append(df)
            left -= len(df)
            if left <= 0:
                break
        kept = [p for p in parts if len(p)] or parts[:1]
        df = kept[0] if len(kept) == 1 else pd.concat(kept, ignore_index=True)
        return conform(df, self.meta, f"the first {self.nrows} lines of {self.paths[0]}")


class ReadJSON(SourceOp):
    """``md.read_json``: one chunk per byte range of each line-delimited file, or per file."""

    params = ("files", "kwargs", "meta", "chunk_bytes", "nrows", "split", "renumber", "storage_options")

    @classmethod
    def tile(cls, op: ReadJSON) -> Generator[Any, Any, Tiled]:
        meta, so = op.meta, op.storage_options
        if op.nrows is not None:
            chunk = ReadJSONHead(paths=[f[0] for f in op.files], kwargs=op.kwargs, nrows=op.nrows, meta=meta,
                                 storage_options=so).new_chunk([], index=chunk_index_of(meta, 0),
                                                               shape=chunk_shape_of(meta, np.nan), meta=meta)
            return Tiled([chunk], nsplits_of(meta, (np.nan,)))
        chunks = []
        for path, size, _ in op.files:
            if op.split and _compression(path, op.kwargs) is None:
                bounds = [0] + _cuts(0, size, op.chunk_bytes) + [size]
                ranges = list(itertools.pairwise(bounds))
            else:
                ranges = [(0, None)]
            for start, end in ranges:
                chunk_op = ReadJSONRange(path=path, start=start, end=end, kwargs=op.kwargs, meta=meta,
                                         storage_options=so)
                chunks.append(chunk_op.new_chunk([], index=chunk_index_of(meta, len(chunks)),
                                                 shape=chunk_shape_of(meta, np.nan), meta=meta))
        if op.renumber:
            return Tiled(*renumber_rows(chunks, meta))
        return Tiled(chunks, nsplits_of(meta, (np.nan,) * len(chunks)))


def _sample(path: str, kwargs: dict, sample_bytes: int, storage_options: dict | None) -> pd.DataFrame:
    if not kwargs.get("lines") or _compression(path, kwargs) is not None or \
            file_size(path, storage_options) <= sample_bytes:
        return _read_whole(path, kwargs, storage_options)
    with open_file(path, "rb", storage_options) as f:
        end = _line_start(f, sample_bytes, b"\n")
        f.seek(0)
        return _read_lines(f.read(end), kwargs)


def read_json(path: Any, orient: str | None = None, lines: bool = False, chunk_bytes: int | str | None = "64M",
              sample_bytes: int | str = _SAMPLE_BYTES, storage_options: dict | None = None,
              **kwargs: Any) -> DataFrame:
    """Read JSON files into a lazy DataFrame; line-delimited ones in chunks of about ``chunk_bytes``.

    Parameters
    ----------
    path : str, os.PathLike, URL, glob pattern, or a list of them
        Several files are read one after the other (globs in natural order).
    orient, lines
        As for ``pandas.read_json``.
    chunk_bytes : int, str or None, default "64M"
        For ``lines=True``: at most this many bytes of text per chunk; ``None``
        reads each file whole. Other JSON is read one file per chunk.
    sample_bytes : int, default 256000
        How much of the first line-delimited file is read to infer dtypes.
    storage_options : dict, optional
        Given to the fsspec filesystem of a URL.
    **kwargs
        Passed to ``pandas.read_json`` (``dtype``, ``convert_dates``,
        ``precise_float``, ``nrows`` with ``lines=True``, ...).

    Returns
    -------
    DataFrame
        Equal to ``pandas.read_json`` of the file (of the files concatenated,
        numbered ``0..n-1`` across them where pandas numbers the rows).

    Examples
    --------
    >>> import mars.dataframe as md
    >>> df = md.read_json("events-*.jsonl", lines=True, chunk_bytes="32M")  # doctest: +SKIP
    """
    for name in ("chunksize", "iterator"):
        if kwargs.get(name):
            raise TypeError(f"md.read_json reads lazily and returns a DataFrame, not a reader: drop {name}=")
    if kwargs.get("typ", "frame") != "frame":
        raise NotImplementedError("md.read_json reads frames (typ='frame'); take the column of the frame instead")
    nrows = kwargs.pop("nrows", None)
    if nrows is not None and not lines:
        raise ValueError("nrows can only be passed if lines=True")
    kwargs = {**kwargs, "orient": orient, "lines": lines}
    so = storage_options
    paths = expand_paths(path, so)
    sample = _sample(paths[0], kwargs, parse_bytes(sample_bytes, "sample_bytes"), so)
    meta = sample.iloc[:0]
    renumber = bool(lines) or orient in ("records", "values")
    cb = None if chunk_bytes is None else parse_bytes(chunk_bytes)
    op = ReadJSON(files=tuple(file_token(p, so) for p in paths), kwargs=kwargs, meta=meta, chunk_bytes=cb,
                  nrows=None if nrows is None else int(nrows), split=bool(lines) and cb is not None,
                  renumber=renumber, storage_options=so)
    return op.new_pandas([], meta, (np.nan, meta.shape[1]))


# ----------------------------------------------------------------- writing
class WriteJSONPart(WritePart):
    """One partition as JSON, with pandas (an empty partition of JSON lines writes nothing)."""

    def write(self, part: Any, path: Any, kwargs: dict) -> Any:
        if kwargs.get("lines") and not len(part):
            if path is None:
                return ""
            kwargs = {k: v for k, v in kwargs.items() if k not in ("lines", "orient")}
            with open_file(path, "wb", kwargs.get("storage_options")):
                return None
        return part.to_json(path, **kwargs)


class ToJSON(ToFiles):
    """``to_json`` of a path: one file per partition, or one file."""

    writer = WriteJSONPart
    if_empty = b"\n"


def to_json(self: Any, path_or_buf: Any = None, *, orient: str | None = None, lines: bool = False,
            single_file: bool | None = None, name_function: Any = None, storage_options: dict | None = None,
            **kwargs: Any) -> Any:
    """Write the DataFrame or Series as JSON, like ``pandas.DataFrame.to_json``, on the workers.

    A path with one ``*``: one file per partition (the ``*`` replaced by the
    partition number, or ``name_function(i)``). A path without: one file;
    for ``lines=True`` (uncompressed) the partitions write parts in parallel
    that one task appends in order, otherwise one task writes the whole.
    ``None``: the text, computed now, as pandas returns it. Other keywords
    are pandas'; ``storage_options`` go to the fsspec filesystem of a URL.

    Returns
    -------
    DataFrame or str
        For a path, a lazy object: ``.execute()`` writes. The text for ``None``.

    Examples
    --------
    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}, chunk_size=1).to_json(orient="records", lines=True)
    '{"a":1}\\n{"a":2}\\n'
    """
    kwargs = {**kwargs, "orient": orient, "lines": lines}
    if path_or_buf is None:
        if lines:
            session = kwargs.pop("session", None)
            return text_of(as_data(self), ToJSON, kwargs, {}, session)
        return self.to_pandas().to_json(**kwargs)
    if hasattr(path_or_buf, "write"):
        return self.to_pandas().to_json(path_or_buf, **kwargs)
    path = os.fspath(path_or_buf)
    how = choose_how(path, single_file)
    appendable = bool(lines) and _compression(path, kwargs) is None
    return lazy_write(as_data(self), ToJSON, kwargs, path, how, storage_options, appendable, name_function)


DataFrame.to_json = to_json
Series.to_json = to_json
