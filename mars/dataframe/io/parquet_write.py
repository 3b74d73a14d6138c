"""Writing Parquet: ``DataFrame.to_parquet``, lazily, on the workers.

A directory (an existing one, or a path ending in ``/``): one file per
partition, ``part.0.parquet``, ``part.1.parquet``, ... (numbers zero-padded
so that pyarrow's path order, and so pandas' reading order, is partition
order). A path with ``*``: one file per partition, the ``*`` replaced by its
number. Any other path: one file, a row group per partition, written by one
task (pyarrow's ``ParquetWriter``; the partitions' schemas unified, so a
partition whose strings are all missing does not make the column null).

``partition_cols=``: a hive-partitioned directory as pandas writes it
(``key=value`` subdirectories, the partition columns left out of the files);
each partition writes its rows into the subdirectories of their values as
``part.<partition number>.<i>.parquet``, in parallel with the others.
"""

from __future__ import annotations

import itertools
import json
import os
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ...core.tiling import as_data
from ..core import DataFrame
from .fs import filesystem, is_url, isdir, join, local_path, open_file
from .writers import ToFiles, WritePart, choose_how, lazy_write

__all__: list[str] = []


class WriteParquet(WritePart):
    """Partitions written to one Parquet file, a row group each; or, with ``partition_cols``, into a hive directory."""

    def execute(self, *parts: pd.DataFrame) -> pd.DataFrame:
        kwargs = dict(self.kwargs)
        index = kwargs.pop("index", None)
        partition_cols = kwargs.pop("partition_cols", None)
        if partition_cols:
            self._write_hive(parts, index, partition_cols, kwargs)
            return pd.DataFrame()
        whole_range = index is None and _contiguous_range(parts)
        preserve = None if whole_range else (True if index is None else index)
        tables = [pa.Table.from_pandas(p, preserve_index=preserve) for p in parts]
        schema = pa.unify_schemas([t.schema for t in tables], promote_options="permissive")
        metadata = dict(tables[0].schema.metadata or {})
        if whole_range:
            metadata[b"pandas"] = _with_range(metadata[b"pandas"], parts)
        schema = schema.with_metadata(metadata)
        if not is_url(self.path):
            os.makedirs(os.path.dirname(os.path.abspath(local_path(self.path))), exist_ok=True)
        with open_file(self.path, "wb", self.storage_options) as sink, \
                pq.ParquetWriter(sink, schema, **kwargs) as writer:
            for t in tables:
                if t.num_rows or len(tables) == 1:
                    writer.write_table(t.cast(schema), row_group_size=max(t.num_rows, 1))
        return pd.DataFrame()

    def _write_hive(self, parts: tuple, index: Any, partition_cols: list, kwargs: dict) -> None:
        """``self.path`` is ``<root>/part.<n>.parquet``: the rows go under ``<root>`` as ``part.<n>.<i>.parquet``."""
        root, name = self.path.rsplit("/", 1) if is_url(self.path) else os.path.split(local_path(self.path))
        fs = None
        if is_url(self.path):
            fs, root = filesystem(root, self.storage_options)
        table = pa.Table.from_pandas(pd.concat(parts) if len(parts) > 1 else parts[0], preserve_index=index)
        if table.num_rows:
            pq.write_to_dataset(table, root, partition_cols=list(partition_cols), filesystem=fs,
                                basename_template=name[:-len(".parquet")] + ".{i}.parquet",
                                existing_data_behavior="overwrite_or_ignore", **kwargs)


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


class ToParquet(ToFiles):
    """``to_parquet`` of a path: one file per partition, one file, or a hive-partitioned directory."""

    writer = WriteParquet


def to_parquet(self: Any, path: Any, engine: str = "pyarrow", compression: str | None = "snappy",
               index: bool | None = None, partition_cols: Any = None, *, storage_options: dict | None = None,
               name_function: Any = None, **kwargs: Any) -> DataFrame:
    """Write the DataFrame as Parquet, like ``pandas.DataFrame.to_parquet``, on the workers.

    Parameters
    ----------
    path : str, os.PathLike or URL
        A directory (an existing one, or a path ending in ``/``): one file
        per partition, ``part.0.parquet``, ...; a path with one ``*``: one
        file per partition, the ``*`` replaced by its number (or by
        ``name_function(i)``); any other path: one file, a row group per
        partition.
    engine, compression, index, **kwargs
        As for ``pandas.DataFrame.to_parquet`` (only the pyarrow engine).
    partition_cols : list of str, optional
        Write a hive-partitioned directory at ``path``, as pandas does.
    storage_options : dict, optional
        Given to the fsspec filesystem of a URL.

    Returns
    -------
    DataFrame
        A lazy object: ``.execute()`` writes (and returns the object; its
        value is an empty DataFrame).

    Examples
    --------
    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2, 3]}, chunk_size=2).to_parquet("out/").execute()  # doctest: +SKIP
    """
    if engine not in ("pyarrow", "auto"):
        raise ValueError(f"to_parquet writes with engine='pyarrow', got engine={engine!r}")
    path = os.fspath(path)
    kwargs = {**kwargs, "compression": compression, "index": index}
    data = as_data(self)
    if partition_cols is not None:
        cols = [partition_cols] if isinstance(partition_cols, str) else list(partition_cols)
        missing = [c for c in cols if c not in data.meta.columns]
        if missing:
            raise KeyError(f"partition_cols {missing} are not columns of the DataFrame: {list(data.meta.columns)}")
        kwargs["partition_cols"] = cols
        return lazy_write(data, ToParquet, kwargs, join(path, "part.*.parquet"), "files", storage_options)
    if path.endswith(("/", os.sep)) or isdir(path, storage_options):
        return lazy_write(data, ToParquet, kwargs, join(path, "part.*.parquet"), "files", storage_options)
    how = choose_how(path, None)
    return lazy_write(data, ToParquet, kwargs, path, how, storage_options, appendable=False,
                      name_function=name_function)


DataFrame.to_parquet = to_parquet
