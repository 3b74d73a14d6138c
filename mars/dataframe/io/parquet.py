"""Parquet files: ``md.read_parquet`` and ``DataFrame.to_parquet``.

Reading makes one chunk per row group of each file, consecutive small row
groups grouped up to about ``chunk_bytes`` (uncompressed). Row counts come
from the files' footers, so the partition sizes and the index are known when
the expression is built: the index is what pandas gives, a stored index
rebuilt from its columns, or the stored ``RangeIndex`` (``start``, ``step``
and name), numbered across row groups. A directory is read as pandas (that
is, pyarrow) lists it: its files in path order, hidden files skipped.

The source reads only the columns selected from it (``df[["a"]]``) and, for
``df.head(n)``, only the row groups that hold the first ``n`` rows.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ...core.operator import Tiled
from ...core.session import resolve_session
from ...core.tiling import as_data
from ..core import DataFrame, PandasOperator, chunk_index_of, chunk_shape_of, nsplits_of
from .source import (
    SourceOp,
    checked_columns,
    conform,
    count_rows,
    expand_paths,
    file_token,
    parse_bytes,
)
from ..rows import numbered

__all__ = ["read_parquet"]


def _to_pandas(table: pa.Table, options: dict) -> pd.DataFrame:
    """pandas' own conversion of what it read (string and timezone handling included)."""
    try:
        from pandas.io._util import arrow_table_to_pandas
    except ImportError:  # pragma: no cover - another pandas: its public conversion
        return table.to_pandas(**options.get("to_pandas_kwargs", {}))
    return arrow_table_to_pandas(table, dtype_backend=options.get("dtype_backend", pd.api.extensions.no_default),
                                 to_pandas_kwargs=options.get("to_pandas_kwargs"))


def _filter_expression(filters: Any) -> Any:
    return None if filters is None else pq.filters_to_expression(filters)


class ReadParquetPiece(PandasOperator):
    """Row groups of one file; ``limit`` keeps only their first rows; ``index`` is ``(start, step, name)``.

    ``index=None`` keeps the index pandas rebuilds from the row groups (a
    stored index, or ``0..k-1`` to be renumbered).
    """

    params = ("path", "row_groups", "columns", "filters", "limit", "index", "options", "meta")

    def execute(self) -> pd.DataFrame:
        pf = pq.ParquetFile(self.path)
        expr = _filter_expression(self.filters)
        columns = self.columns
        if expr is not None and columns is not None:
            extra = [c for c in _filter_columns(self.filters) if c not in columns]
            columns = list(columns) + extra
        table = pf.read_row_groups(list(self.row_groups), columns=columns, use_pandas_metadata=True)
        if expr is not None:
            table = table.filter(expr)
            if columns is not None and len(columns) > len(self.columns):
                table = table.drop_columns(columns[len(self.columns):])
        if self.limit is not None:
            table = table.slice(0, self.limit)
        df = _to_pandas(table, self.options)
        if self.index is not None:
            start, step, name = self.index
            df = df.set_axis(pd.RangeIndex(start, start + len(df) * step, step, name=name), axis=0)
        return conform(df, self.meta, f"row groups {list(self.row_groups)} of {self.path}")


def _filter_columns(filters: Any) -> list:
    """Column names the filters (a list of tuples, or a list of such lists) refer to."""
    out: list = []
    for item in filters:
        for t in (item if item and isinstance(item[0], (list, tuple)) else [item]):
            if t[0] not in out:
                out.append(t[0])
    return out


class ReadParquet(SourceOp):
    """``md.read_parquet``: ``files`` are ``(path, size, mtime, row counts, row-group bytes)``."""

    params = ("files", "columns", "filters", "chunk_bytes", "head", "range_index", "options", "meta")

    @classmethod
    def tile(cls, op: ReadParquet) -> Generator[Any, Any, Tiled]:
        meta = op.meta
        pieces = op._pieces()
        if op.filters is None:
            chunks, rows = [], []
            start, step, name = op.range_index or (0, 1, None)
            for i, (path, groups, n, limit) in enumerate(pieces):
                index = None if op.range_index is False else (start, step, name)
                chunks.append(op._piece(i, path, groups, limit, index, n))
                start += n * step
                rows.append(n)
            return Tiled(chunks, nsplits_of(meta, rows))
        index = None if op.range_index is False else (0, 1, None)
        chunks = [op._piece(i, path, groups, None, index, np.nan) for i, (path, groups, _, _) in enumerate(pieces)]
        if op.range_index is False:
            return Tiled(chunks, nsplits_of(meta, (np.nan,) * len(chunks)))
        rows = yield from count_rows(chunks)
        return Tiled(numbered(chunks, rows, meta), nsplits_of(meta, rows))

    def _piece(self, i: int, path: str, groups: tuple, limit: Any, index: Any, rows: Any) -> Any:
        op = ReadParquetPiece(path=path, row_groups=groups, columns=self.columns, filters=self.filters,
                              limit=limit, index=index, options=self.options, meta=self.meta)
        return op.new_chunk([], index=chunk_index_of(self.meta, i), shape=chunk_shape_of(self.meta, rows),
                            meta=self.meta)

    def _pieces(self) -> list[tuple]:
        """(path, row groups, rows, limit) per chunk: row groups grouped up to ``chunk_bytes``, up to ``head`` rows."""
        out: list[tuple] = []
        left = self.head
        for path, _, _, rows, sizes in self.files:
            groups: list[int] = []
            n = size = 0
            for g, (r, b) in enumerate(zip(rows, sizes)):
                if left is not None and left <= 0:
                    break
                if groups and size + b > self.chunk_bytes:
                    out.append((path, tuple(groups), n, None))
                    groups, n, size = [], 0, 0
                take = r if left is None else min(r, left)
                groups.append(g)
                n, size = n + take, size + b
                if left is not None:
                    left -= take
            if groups:
                out.append((path, tuple(groups), n, n if self.head is not None else None))
            if left is not None and left <= 0:
                break
        if not out:  # no rows at all: one empty chunk with the right columns
            path, _, _, rows, _ = self.files[0]
            out.append((path, (), 0, None))
        return out

    def with_columns(self, columns: list) -> Any:
        columns = checked_columns(self.meta, columns)
        if columns is None:
            return None
        meta = self.meta[columns]
        op = self.copy(columns=columns, meta=meta)
        return op.new_pandas([], meta, (self.outputs[0].shape[0], len(columns))).data

    def with_head(self, n: int) -> Any:
        if self.filters is not None:
            return None
        head = n if self.head is None else min(n, self.head)
        op = self.copy(head=head)
        total = sum(sum(f[3]) for f in self.files)
        return op.new_pandas([], self.meta, (min(head, total), self.meta.shape[1])).data


# ----------------------------------------------------------------- files and metadata
def _parquet_files(path: Any) -> list[str]:
    """The files pandas would read: a directory as pyarrow lists it, else paths and globs."""
    if not isinstance(path, (list, tuple)) and os.path.isdir(os.fspath(path)):
        import pyarrow.dataset as ds

        dataset = ds.dataset(os.fspath(path), format="parquet", partitioning="hive")
        files = list(dataset.files)
        if not files:
            raise FileNotFoundError(f"no parquet files in {os.fspath(path)!r}")
        if len(dataset.schema) > len(pq.read_schema(files[0])):
            raise NotImplementedError(f"{os.fspath(path)!r} is a hive-partitioned dataset (directories named "
                                      "key=value); md.read_parquet reads plain files and directories of files")
        return files
    return expand_paths(path)


def _file_entry(path: str) -> tuple:
    md = pq.ParquetFile(path).metadata
    groups = [md.row_group(i) for i in range(md.num_row_groups)]
    return file_token(path) + (tuple(g.num_rows for g in groups), tuple(g.total_byte_size for g in groups))


def _pandas_index(schema: pa.Schema) -> list:
    meta = (schema.metadata or {}).get(b"pandas")
    return json.loads(meta)["index_columns"] if meta else []


def _range_index(schema: pa.Schema, total: int, filtered: bool) -> Any:
    """``(start, step, name)`` of the index pandas gives, or ``False`` when it is rebuilt from columns.

    pandas (pyarrow) keeps a stored ``RangeIndex`` only when its length is the
    number of rows read; otherwise it gives ``0..n-1``.
    """
    stored = _pandas_index(schema)
    if any(not isinstance(d, dict) for d in stored):
        return False
    if len(stored) == 1 and stored[0].get("kind") == "range" and not filtered:
        d = stored[0]
        if len(range(d["start"], d["stop"], d["step"])) == total:
            return (d["start"], d["step"], d["name"])
    return (0, 1, None)


def _meta(path: str, schema: pa.Schema, columns: list | None, range_index: Any, options: dict) -> pd.DataFrame:
    names = [f.name for f in schema]
    if columns is not None:
        missing = [c for c in columns if c not in names]
        if missing:  # pyarrow's error, as pandas gives it
            raise pa.ArrowInvalid(f"No match for FieldRef.Name({missing[0]}) in {path!r}, whose columns are {names}")
        index_cols = [d for d in _pandas_index(schema) if isinstance(d, str) and d not in columns]
        table = schema.empty_table().select(list(columns) + index_cols)
    else:
        table = schema.empty_table()
    dict_cols = [f.name for f in table.schema if pa.types.is_dictionary(f.type)]
    if dict_cols:
        # categories come from the data: the first row group's dictionaries
        pf = pq.ParquetFile(path)
        if pf.metadata.num_row_groups:
            first = pf.read_row_group(0, columns=dict_cols).slice(0, 0)
            for name in dict_cols:
                table = table.set_column(table.schema.get_field_index(name), name, first.column(name))
    meta = _to_pandas(table, options)
    if range_index is not False:
        meta.index = pd.RangeIndex(0, 0, name=range_index[2])
    return meta


def read_parquet(path: Any, columns: list | None = None, engine: str = "pyarrow", filters: Any = None,
                 chunk_bytes: int | str = "64M", dtype_backend: Any = pd.api.extensions.no_default,
                 to_pandas_kwargs: dict | None = None) -> DataFrame:
    """Read Parquet files into a lazy DataFrame, one chunk per row group (small ones grouped).

    Parameters
    ----------
    path : str, os.PathLike, directory, glob pattern, or a list of them
    columns : list, optional
        Only these columns are read (the index columns too, as pandas does).
    engine : {"pyarrow", "auto"}
    filters : list of tuples or list of lists of tuples, optional
        pyarrow's row filters (``[("a", ">", 3)]``), applied to each row group.
    chunk_bytes : int or str, default "64M"
        Consecutive row groups are read together up to this many (uncompressed) bytes.
    dtype_backend, to_pandas_kwargs
        As for ``pandas.read_parquet``.

    Returns
    -------
    DataFrame
        Equal to ``pandas.read_parquet(path, columns=columns, filters=filters)``.

    Examples
    --------
    >>> import mars.dataframe as md
    >>> df = md.read_parquet("data.parquet")  # doctest: +SKIP
    >>> df[["a"]].head(5).execute()  # reads column a of the first row group only  # doctest: +SKIP
    """
    if engine not in ("pyarrow", "auto"):
        raise ValueError(f"md.read_parquet reads with engine='pyarrow', got engine={engine!r}")
    files = [_file_entry(p) for p in _parquet_files(path)]
    schema = pq.read_schema(files[0][0])
    if columns is not None:
        columns = list(columns)
    options = {"dtype_backend": dtype_backend, "to_pandas_kwargs": to_pandas_kwargs}
    total = sum(sum(f[3]) for f in files)
    range_index = _range_index(schema, total, filters is not None)
    meta = _meta(files[0][0], schema, columns, range_index, options)
    op = ReadParquet(files=tuple(files), columns=columns, filters=filters, chunk_bytes=parse_bytes(chunk_bytes),
                     head=None, range_index=range_index, options=options, meta=meta)
    rows = np.nan if filters is not None else total
    return op.new_pandas([], meta, (rows, meta.shape[1]))


# ----------------------------------------------------------------- writing
def _part_name(i: int, n: int) -> str:
    """``part.{i}.parquet``, zero-padded so that pyarrow's (and pandas') path order is partition order."""
    return f"part.{str(i).zfill(len(str(max(n - 1, 0))))}.parquet"


class WriteParquetPart(PandasOperator):
    """One partition written to its own file with pandas."""

    params = ("path", "kwargs")

    def execute(self, part: pd.DataFrame) -> pd.DataFrame:
        part.to_parquet(self.path, engine="pyarrow", **self.kwargs)
        return pd.DataFrame()


class WriteParquetFile(PandasOperator):
    """All partitions written to one file in order, a row group each (pyarrow's ``ParquetWriter``)."""

    params = ("path", "index", "kwargs")

    def execute(self, *parts: pd.DataFrame) -> pd.DataFrame:
        whole_range = self.index is None and _contiguous_range(parts)
        preserve = None if whole_range else (True if self.index is None else self.index)
        tables = [pa.Table.from_pandas(p, preserve_index=preserve) for p in parts]
        schema = pa.unify_schemas([t.schema for t in tables], promote_options="permissive")
        metadata = dict(tables[0].schema.metadata or {})
        if whole_range:
            metadata[b"pandas"] = _with_range(metadata[b"pandas"], parts)
        schema = schema.with_metadata(metadata)
        kwargs = dict(self.kwargs)
        with pq.ParquetWriter(self.path, schema, **kwargs) as writer:
            for t in tables:
                if t.num_rows or len(tables) == 1:
                    writer.write_table(t.cast(schema), row_group_size=max(t.num_rows, 1))
        return pd.DataFrame()


def _contiguous_range(parts: tuple) -> bool:
    """Whether the partitions' indexes together are one ``RangeIndex`` (then stored as metadata, as pandas does)."""
    if not all(isinstance(p.index, pd.RangeIndex) for p in parts):
        return False
    kept = [p.index for p in parts if len(p)]
    if not kept:
        return True
    step = kept[0].step
    return all(a.step == step and b.step == step and a.stop == b.start for a, b in itertools.pairwise(kept)) and \
        all(i.name == kept[0].name for i in kept)


def _with_range(pandas_meta: bytes, parts: tuple) -> bytes:
    d = json.loads(pandas_meta)
    kept = [p.index for p in parts if len(p)] or [parts[0].index]
    for entry in d["index_columns"]:
        if isinstance(entry, dict) and entry.get("kind") == "range":
            entry.update(start=kept[0].start, stop=kept[-1].stop, step=kept[0].step)
    return json.dumps(d).encode()


class ToParquet(PandasOperator):
    """``to_parquet``: one file per partition (a directory, or a path with ``*``), or one file."""

    params = ("path", "index", "kwargs", "how")

    @classmethod
    def tile(cls, op: ToParquet) -> Tiled:
        data = op.inputs[0]
        meta = op.outputs[0].meta
        n = len(data.chunks)
        if op.how == "file":
            chunk = WriteParquetFile(path=op.path, index=op.index, kwargs=op.kwargs).new_chunk(
                list(data.chunks), index=(0, 0), shape=(0, 0), meta=meta)
            return Tiled([chunk], ((0,), (0,)))
        chunks = []
        for i, c in enumerate(data.chunks):
            if op.how == "dir":
                path = os.path.join(op.path, _part_name(i, n))
            else:
                path = op.path.replace("*", str(i).zfill(len(str(max(n - 1, 0)))))
            kwargs = {**op.kwargs, "index": op.index}
            chunks.append(WriteParquetPart(path=path, kwargs=kwargs).new_chunk([c], index=(i, 0), shape=(0, 0),
                                                                                meta=meta))
        return Tiled(chunks, ((0,) * n, (0,)))


def to_parquet(self: Any, path: Any, engine: str = "pyarrow", compression: str | None = "snappy",
               index: bool | None = None, partition_cols: Any = None, *, session: Any = None,
               **kwargs: Any) -> None:
    """Write the DataFrame as Parquet, like ``pandas.DataFrame.to_parquet``; runs right away.

    ``path`` a directory (an existing one, or a path ending in ``/``): one
    file per partition, ``part.0.parquet``, ``part.1.parquet``, ... (numbers
    zero-padded to sort in order). A path with ``*``: one file per partition,
    the ``*`` replaced by its number. Any other path: one file, a row group
    per partition. Runs in ``session`` (default: the default session).

    Examples
    --------
    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2, 3]}, chunk_size=2).to_parquet("out/")  # doctest: +SKIP
    """
    if engine not in ("pyarrow", "auto"):
        raise ValueError(f"to_parquet writes with engine='pyarrow', got engine={engine!r}")
    if partition_cols is not None:
        raise NotImplementedError("to_parquet(partition_cols=...) is not supported; write one file per partition "
                                  "with a directory path")
    path = os.fspath(path)
    kwargs = {**kwargs, "compression": compression}
    if "*" in path:
        how = "files"
    elif path.endswith(os.sep) or os.path.isdir(path):
        how = "dir"
        os.makedirs(path, exist_ok=True)
    else:
        how = "file"
    data = as_data(self)
    op = ToParquet(path=path, index=index, kwargs=kwargs, how=how)
    written = op.new_pandas([data], pd.DataFrame(), (0, 0))
    written.execute(session=resolve_session(session))


DataFrame.to_parquet = to_parquet
