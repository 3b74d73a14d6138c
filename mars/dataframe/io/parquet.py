"""Parquet files: ``md.read_parquet`` (writing: :mod:`.parquet_write`).

Reading makes one chunk per row group of each file, consecutive small row
groups grouped up to about ``chunk_bytes`` (uncompressed). Row counts come
from the files' footers, so the partition sizes and the index are known when
the expression is built: the index is what pandas gives, a stored index
rebuilt from its columns, or the stored ``RangeIndex`` (``start``, ``step``
and name), numbered across row groups. A directory is read as pandas (that
is, pyarrow) lists it: its files in path order, hidden files skipped.

A hive-partitioned directory (``key=value`` subdirectories) gets its
partition columns back as pandas gives them: categoricals whose categories
are all the values found, after the files' own columns. ``filters=`` on
partition columns prune whole files when the expression is built (pyarrow's
own pruning); the rest of the filter is applied to each row group's rows.
Paths may be fsspec URLs (``storage_options=`` for their filesystem).

The source reads only the columns selected from it (``df[["a"]]``) and, for
``df.head(n)``, only the row groups that hold the first ``n`` rows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ...core.operator import Tiled
from ..core import DataFrame, PandasOperator, chunk_index_of, chunk_shape_of, nsplits_of
from ..rows import numbered
from .fs import (
    expand_paths,
    file_token,
    filesystem,
    is_url,
    isdir,
    local_path,
    open_file,
)
from .source import (
    SourceOp,
    checked_columns,
    conform,
    count_rows,
    parse_bytes,
)

__all__ = ["read_parquet"]


#: how a piece becomes pandas unless the user says: a block per column, taken over from arrow without a copy
#: where possible (the table is not used after). The whole, when fetched, is a fresh (writable) concatenation;
#: the chunks may be read-only, as pandas' own ``to_numpy()`` views are.
_ZERO_COPY = {"split_blocks": True, "self_destruct": True}


def _to_pandas(table: pa.Table, options: dict) -> pd.DataFrame:
    """pandas' own conversion of what it read (string and timezone handling included); ``table`` is consumed."""
    kwargs = options.get("to_pandas_kwargs")
    kwargs = dict(_ZERO_COPY) if kwargs is None else kwargs
    try:
        from pandas.io._util import arrow_table_to_pandas
    except ImportError:  # pragma: no cover - another pandas: its public conversion
        return table.to_pandas(**kwargs)
    return arrow_table_to_pandas(table, dtype_backend=options.get("dtype_backend", pd.api.extensions.no_default),
                                 to_pandas_kwargs=kwargs)


def _filter_expression(filters: Any) -> Any:
    return None if filters is None else pq.filters_to_expression(filters)


def open_parquet(path: str, storage_options: dict | None) -> pq.ParquetFile:
    if not is_url(path):
        return pq.ParquetFile(local_path(path))
    return pq.ParquetFile(open_file(path, "rb", storage_options))


def _with_partitions(table: pa.Table, hive: tuple, codes: tuple, wanted: list | None) -> pa.Table:
    """``table`` with the hive partition columns in ``wanted`` (all: None) appended, as dictionary columns."""
    n = table.num_rows
    for (name, dictionary), code in zip(hive, codes):
        if wanted is not None and name not in wanted:
            continue
        indices = pa.nulls(n, pa.int32()) if code is None else pa.array(np.full(n, code, dtype=np.int32))
        table = table.append_column(name, pa.DictionaryArray.from_arrays(indices, dictionary))
    return table


class ReadParquetPiece(PandasOperator):
    """Row groups of one file; ``limit`` keeps only their first rows; ``index`` is ``(start, step, name)``.

    ``index=None`` keeps the index pandas rebuilds from the row groups (a
    stored index, or ``0..k-1`` to be renumbered).
    """

    params = ("path", "row_groups", "columns", "filters", "limit", "index", "options", "meta", "hive", "codes",
              "storage_options")

    def execute(self) -> pd.DataFrame:
        pf = open_parquet(self.path, self.storage_options)
        expr = _filter_expression(self.filters)
        columns = self.columns
        if expr is not None and columns is not None:
            extra = [c for c in _filter_columns(self.filters) if c not in columns]
            columns = list(columns) + extra
        names = {name for name, _ in self.hive or ()}
        file_columns = None if columns is None else [c for c in columns if c not in names]
        table = pf.read_row_groups(list(self.row_groups), columns=file_columns, use_pandas_metadata=True)
        if self.hive:
            table = _with_partitions(table, self.hive, self.codes, columns)
            if columns is not None:  # the order asked for, then the index columns pandas' metadata names
                table = table.select(list(columns) + [c for c in table.column_names if c not in columns])
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

    params = ("files", "columns", "filters", "chunk_bytes", "head", "range_index", "options", "meta", "hive",
              "storage_options", "skip")

    @classmethod
    def tile(cls, op: ReadParquet) -> Generator[Any, Any, Tiled]:
        meta = op.meta
        pieces = op._pieces()
        if op.filters is None:
            chunks, rows = [], []
            start, step, name = op.range_index or (0, 1, None)
            for i, (path, groups, n, limit, codes, gap) in enumerate(pieces):
                start += gap * step  # rows of row groups left out (``skip``) keep their labels
                index = None if op.range_index is False else (start, step, name)
                chunks.append(op._piece(i, path, groups, limit, index, n, codes))
                start += n * step
                rows.append(n)
            return Tiled(chunks, nsplits_of(meta, rows))
        index = None if op.range_index is False else (0, 1, None)
        chunks = [op._piece(i, path, groups, None, index, np.nan, codes)
                  for i, (path, groups, _, _, codes, _) in enumerate(pieces)]
        if op.range_index is False:
            return Tiled(chunks, nsplits_of(meta, (np.nan,) * len(chunks)))
        rows = yield from count_rows(chunks)
        return Tiled(numbered(chunks, rows, meta), nsplits_of(meta, rows))

    def _piece(self, i: int, path: str, groups: tuple, limit: Any, index: Any, rows: Any, codes: tuple) -> Any:
        op = ReadParquetPiece(path=path, row_groups=groups, columns=self.columns, filters=self.filters,
                              limit=limit, index=index, options=self.options, meta=self.meta, hive=self.hive,
                              codes=codes, storage_options=self.storage_options)
        return op.new_chunk([], index=chunk_index_of(self.meta, i), shape=chunk_shape_of(self.meta, rows),
                            meta=self.meta)

    def _pieces(self) -> list[tuple]:
        """(path, row groups, rows, limit, partition codes, rows skipped before it) per chunk.

        Row groups are grouped up to ``chunk_bytes``, up to ``head`` rows;
        those ``skip`` names (per file, set by the optimizer's predicate
        pushdown) are not read.
        """
        out: list[tuple] = []
        left = self.head
        gap = 0
        for f, (path, _, _, rows, sizes, codes) in enumerate(self.files):
            skip = self.skip[f] if self.skip else ()
            groups: list[int] = []
            n = size = 0
            for g, (r, b) in enumerate(zip(rows, sizes)):
                if left is not None and left <= 0:
                    break
                if g in skip or (groups and size + b > self.chunk_bytes):
                    if groups:
                        out.append((path, tuple(groups), n, None, codes, gap))
                        groups, n, size, gap = [], 0, 0, 0
                    if g in skip:
                        gap += r
                        continue
                take = r if left is None else min(r, left)
                groups.append(g)
                n, size = n + take, size + b
                if left is not None:
                    left -= take
            if groups:
                out.append((path, tuple(groups), n, n if self.head is not None else None, codes, gap))
                gap = 0
            if left is not None and left <= 0:
                break
        if not out:  # no rows at all: one empty chunk with the right columns
            out.append((self.files[0][0], (), 0, None, self.files[0][5], 0))
        return out

    def with_columns(self, columns: list) -> Any:
        columns = checked_columns(self.meta, columns)
        if columns is None:
            return None
        meta = self.meta[columns]
        op = self.copy(columns=columns, meta=meta)
        return op.new_pandas([], meta, (self.outputs[0].shape[0], len(columns))).data

    def with_skipped(self, skip: tuple) -> Any:
        """A source that does not read row groups ``skip[f]`` of file ``f`` (their rows' labels are kept)."""
        op = self.copy(skip=tuple(tuple(sorted(s)) for s in skip))
        rows = sum(r for f, entry in zip(skip, self.files) for g, r in enumerate(entry[3]) if g not in f)
        return op.new_pandas([], self.meta, (rows, self.meta.shape[1])).data

    def with_head(self, n: int) -> Any:
        if self.filters is not None or self.skip:
            return None
        head = n if self.head is None else min(n, self.head)
        op = self.copy(head=head)
        total = sum(sum(f[3]) for f in self.files)
        return op.new_pandas([], self.meta, (min(head, total), self.meta.shape[1])).data


# ----------------------------------------------------------------- files and metadata
def _dataset(path: str, storage_options: dict | None) -> Any:
    """The directory as pandas (pyarrow) reads it: hive partitions discovered, as dictionaries."""
    import pyarrow.dataset as ds

    fs, root = (filesystem(path, storage_options) if is_url(path) else (None, local_path(path)))
    return ds.dataset(root, filesystem=fs, format="parquet",
                      partitioning=ds.HivePartitioning.discover(infer_dictionary=True)), fs


def _directory_files(path: str, storage_options: dict | None, filters: Any) -> tuple[list, tuple, pa.Schema]:
    """(files with their partition codes, hive fields ``(name, dictionary)``, schema) of a directory.

    Files whose partition values cannot pass ``filters`` are left out.
    """
    import pyarrow.dataset as ds

    dataset, fs = _dataset(path, storage_options)
    if not dataset.files:
        raise FileNotFoundError(f"no parquet files in {path!r}")
    part = dataset.partitioning
    # a directory with no key=value names has no dictionaries (its "partition schema" is the files')
    hive = tuple((f.name, d) for f, d in zip(part.schema, part.dictionaries or []) if d is not None) if part else ()
    expr = _filter_expression(filters)
    fragments = dataset.get_fragments() if expr is None or not hive else dataset.get_fragments(filter=expr)
    fragments = list(fragments)
    if not fragments:  # none pass: one file whose rows the filter drops; pandas then finds no categories
        fragments = list(dataset.get_fragments())[:1]
        hive = tuple((name, d.slice(0, 0)) for name, d in hive)
    out = []
    for fragment in fragments:
        keys = ds.get_partition_keys(fragment.partition_expression) if hive else {}
        codes = tuple(_code(d, keys.get(name)) if len(d) else None for name, d in hive)
        out.append((fragment.path if fs is None else fs.unstrip_protocol(fragment.path), codes))
    return out, hive, dataset.schema


def _code(dictionary: pa.Array, value: Any) -> int | None:
    if value is None:
        return None
    return dictionary.to_pylist().index(value)


def _file_entry(path: str, codes: tuple, storage_options: dict | None) -> tuple:
    md = open_parquet(path, storage_options).metadata
    groups = [md.row_group(i) for i in range(md.num_row_groups)]
    return file_token(path, storage_options) + (tuple(g.num_rows for g in groups),
                                                tuple(g.total_byte_size for g in groups), codes)


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


def _meta(path: str, schema: pa.Schema, columns: list | None, range_index: Any, options: dict, hive: tuple,
          storage_options: dict | None) -> pd.DataFrame:
    names = [f.name for f in schema]
    if columns is not None:
        missing = [c for c in columns if c not in names]
        if missing:  # pyarrow's error, as pandas gives it
            raise pa.ArrowInvalid(f"No match for FieldRef.Name({missing[0]}) in {path!r}, whose columns are {names}")
        index_cols = [d for d in _pandas_index(schema) if isinstance(d, str) and d not in columns]
        table = schema.empty_table().select(list(columns) + index_cols)
    else:
        table = schema.empty_table()
    partitions = dict(hive)
    for name in table.column_names:
        if name in partitions:  # categories: all the values of the directories' names
            table = table.set_column(table.schema.get_field_index(name), name,
                                     pa.DictionaryArray.from_arrays(pa.array([], pa.int32()), partitions[name]))
    dict_cols = [f.name for f in table.schema if pa.types.is_dictionary(f.type) and f.name not in partitions]
    if dict_cols:
        # categories come from the data: the first row group's dictionaries
        pf = open_parquet(path, storage_options)
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
                 to_pandas_kwargs: dict | None = None, storage_options: dict | None = None) -> DataFrame:
    """Read Parquet files into a lazy DataFrame, one chunk per row group (small ones grouped).

    Parameters
    ----------
    path : str, os.PathLike, URL, directory, glob pattern, or a list of them
        A directory may be hive-partitioned (``year=2024/part.0.parquet``):
        its partition columns come back as pandas gives them (categoricals).
    columns : list, optional
        Only these columns are read (the index columns too, as pandas does).
    engine : {"pyarrow", "auto"}
    filters : list of tuples or list of lists of tuples, optional
        pyarrow's row filters (``[("a", ">", 3)]``), applied to each row group;
        on partition columns, they prune whole files before anything is read.
    chunk_bytes : int or str, default "64M"
        Consecutive row groups are read together up to this many (uncompressed) bytes.
    dtype_backend, to_pandas_kwargs
        As for ``pandas.read_parquet``.
    storage_options : dict, optional
        Given to the fsspec filesystem of a URL.

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
    so = storage_options
    single = not isinstance(path, (list, tuple))
    if single and isdir(os.fspath(path), so):
        listed, hive, schema = _directory_files(os.fspath(path), so, filters)
    else:
        listed, hive, schema = [(p, ()) for p in expand_paths(path, so)], (), None
    files = [_file_entry(p, codes, so) for p, codes in listed]
    schema = schema if schema is not None else open_parquet(files[0][0], so).schema_arrow
    if columns is not None:
        columns = list(columns)
    options = {"dtype_backend": dtype_backend, "to_pandas_kwargs": to_pandas_kwargs}
    total = sum(sum(f[3]) for f in files)
    range_index = _range_index(schema, total, filters is not None)
    meta = _meta(files[0][0], schema, columns, range_index, options, hive, so)
    op = ReadParquet(files=tuple(files), columns=columns, filters=filters, chunk_bytes=parse_bytes(chunk_bytes),
                     head=None, range_index=range_index, options=options, meta=meta, hive=hive, storage_options=so)
    rows = np.nan if filters is not None else total
    return op.new_pandas([], meta, (rows, meta.shape[1]))


