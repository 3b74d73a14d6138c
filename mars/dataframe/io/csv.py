"""CSV files: ``md.read_csv`` and ``DataFrame.to_csv`` / ``Series.to_csv``.

Reading cuts each uncompressed file into byte ranges of at most
``chunk_bytes`` that end on line boundaries. Each chunk op reads its range
(seek to the start, skip to the next line unless at 0, read to the first
line end after the end) and parses it with ``pandas.read_csv`` after the
file's own header lines, with the caller's keyword arguments. Compressed
files, and files read with arguments that refer to absolute line numbers
(``skiprows`` as a list or callable, ``skipfooter``), are read whole, one
chunk per file. The metadata is pandas' reading of the first
``sample_bytes`` of the first file that has rows.

Limitation: a quoted field holding a line break is not split correctly when a
chunk boundary falls inside it. When the sample shows such fields, files are
read whole; otherwise a chunk that ends inside a quoted field raises an error
saying to pass ``chunk_bytes=None`` (read each file whole).
"""

from __future__ import annotations

import codecs
import io
import itertools
import os
import warnings
from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ...core.options import options
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
from .csv_text import partition_csv
from .fs import expand_paths, file_size, file_token, is_url, local_path, open_file
from .source import (
    SourceOp,
    checked_columns,
    conform,
    parse_bytes,
)
from .writers import ToFiles, WritePart, choose_how, lazy_write, text_of

__all__ = ["read_csv"]

_SAMPLE_BYTES = 256_000
_COMPRESSED_EXTENSIONS = (".gz", ".bz2", ".zip", ".xz", ".zst", ".tar", ".tgz", ".tbz", ".txz")


# ----------------------------------------------------------------- byte ranges on line boundaries
def _line_start(f: Any, pos: int, term: bytes) -> int:
    """The first line start at or after ``pos`` (the file's size when there is none)."""
    if pos <= 0:
        return 0
    f.seek(pos - 1)
    while True:
        block = f.read(1 << 16)
        if not block:
            return f.tell()
        i = block.find(term)
        if i >= 0:
            return f.tell() - len(block) + i + 1


def _header_lines(kwargs: dict) -> int:
    header = kwargs.get("header", "infer")
    if header == "infer":
        header = 0 if kwargs.get("names") is None else None
    if header is None:
        return 0
    if isinstance(header, (list, tuple)):
        return max(header) + 1
    return int(header) + 1


def _data_start(path: str, kwargs: dict, term: bytes, storage_options: dict | None = None) -> int:
    """The byte after the lines pandas reads before the data: ``skiprows`` lines, then the header rows.

    Header rows are counted as pandas counts them: blank lines and comment
    lines do not count when ``skip_blank_lines`` is on.
    """
    skip = int(kwargs.get("skiprows") or 0)
    wanted = _header_lines(kwargs)
    comment = kwargs.get("comment")
    comment = comment.encode() if isinstance(comment, str) else comment
    skip_blank = kwargs.get("skip_blank_lines", True)
    with open_file(path, "rb", storage_options) as f:
        pos = 0
        while skip or wanted:
            nxt = _line_start(f, pos + 1, term)
            if nxt == pos:
                break
            f.seek(pos)
            line = f.read(nxt - pos).strip()
            pos = nxt
            if skip:
                skip -= 1
            elif not (skip_blank and (not line or (comment and line.startswith(comment)))):
                wanted -= 1
        return pos


def _cuts(data_start: int, size: int, chunk_bytes: int) -> list[int]:
    """Where to cut the data into equal ranges of at most ``chunk_bytes``.

    With several ranges, their number is rounded up to a multiple of the
    local threads, so that no thread is left idle in the last round.
    """
    n = -(-(size - data_start) // chunk_bytes)
    if n > 1:
        threads = options.effective_threads()
        n = -(-n // threads) * threads
    step = (size - data_start) / max(n, 1)
    return sorted({data_start + int(step * i) for i in range(1, n)} - {data_start, size})


def _is_compressed(path: str, kwargs: dict) -> bool:
    compression = kwargs.get("compression", "infer")
    if isinstance(compression, dict):
        compression = compression.get("method")
    if compression == "infer":
        return path.lower().endswith(_COMPRESSED_EXTENSIONS)
    return compression is not None


def _splittable(kwargs: dict) -> bool:
    """Whether chunks can be parsed on their own: no absolute line numbers, an ASCII-compatible encoding."""
    skiprows = kwargs.get("skiprows")
    if skiprows is not None and not isinstance(skiprows, (int, np.integer)):
        return False
    if kwargs.get("skipfooter", 0):
        return False
    encoding = kwargs.get("encoding") or "utf-8"
    try:
        # utf-8-sig only adds a byte-order mark, which every chunk's header prefix carries
        return codecs.lookup(encoding).name == "utf-8-sig" or "\n".encode(encoding) == b"\n"
    except LookupError:
        return False


_BY_EXTENSION = {".gz": "gzip", ".bz2": "bz2", ".zip": "zip", ".xz": "xz", ".zst": "zstd", ".tar": "tar",
                 ".tgz": "tar", ".tbz": "tar", ".txz": "tar"}


def read_whole(path: str, kwargs: dict, storage_options: dict | None, **extra: Any) -> pd.DataFrame:
    """pandas' reading of a whole file (a local path, or a URL opened through fsspec)."""
    kw = {**kwargs, **extra}
    if not is_url(path):
        return pd.read_csv(local_path(path), **kw)
    if kw.get("compression", "infer") == "infer":
        kw["compression"] = next((c for e, c in _BY_EXTENSION.items() if path.lower().endswith(e)), None)
    with open_file(path, "rb", storage_options) as f:
        return pd.read_csv(f, **kw)


def _terminator(kwargs: dict) -> bytes:
    term = kwargs.get("lineterminator")
    return term.encode() if term else b"\n"


# ----------------------------------------------------------------- the chunk ops
class _RangeFile(io.RawIOBase):
    """The header bytes, then bytes ``[begin, stop)`` of a file, as one stream (nothing copied whole)."""

    def __init__(self, path: str, prefix: bytes, begin: int, stop: int, storage_options: dict | None = None):
        super().__init__()
        self._file = open_file(path, "rb", storage_options)
        self._file.seek(begin)
        self._prefix = memoryview(prefix)
        self._left = stop - begin

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if len(self._prefix):
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        if self._left <= 0:
            return 0
        n = self._file.readinto(memoryview(buffer)[:min(len(buffer), self._left)]) or 0
        self._left -= n
        return n

    def close(self) -> None:
        self._file.close()
        super().close()


def _parse(stream: Any, kwargs: dict, columns: list | None, where: str) -> pd.DataFrame:
    try:
        with stream:
            df = pd.read_csv(stream, **kwargs)
    except pd.errors.ParserError as e:
        if "EOF inside string" in str(e):
            raise ValueError(
                f"{where} ends inside a quoted field: a quoted value holds a line break and a chunk boundary fell "
                "in it; pass chunk_bytes=None to read each file whole"
            ) from e
        raise
    return df if columns is None else df[columns]


def _with_dtypes(kwargs: dict, dtypes: dict) -> dict:
    """``kwargs`` with ``dtype=`` also naming ``dtypes`` (for reparsing a chunk)."""
    current = kwargs.get("dtype")
    if current is not None and not isinstance(current, dict):
        return kwargs
    merged = dict(current or {})
    merged.update({k: v for k, v in dtypes.items() if k not in merged})
    return {**kwargs, "dtype": merged}


class ReadCSVRange(PandasOperator):
    """Rows of one file whose lines start in bytes ``[start, end)`` (``end=None``: the whole file via pandas)."""

    params = ("path", "start", "end", "data_start", "kwargs", "meta", "columns", "storage_options")

    def execute(self) -> pd.DataFrame:
        kwargs = self.kwargs
        if self.end is None:
            where = f"file {self.path}"
            df = read_whole(self.path, kwargs, self.storage_options)
            df = df if self.columns is None else df[self.columns]
            return conform(df, self.meta, where)
        span = self._span(_terminator(kwargs))
        if span is None:
            return self.meta.copy()
        where = f"bytes {span[1]}-{span[2]} of {self.path}"

        def parse(kw: dict) -> pd.DataFrame:
            stream = _RangeFile(self.path, *span, storage_options=self.storage_options)
            return _parse(io.BufferedReader(stream, 1 << 20), kw, self.columns, where)

        try:
            return conform(parse(kwargs), self.meta, where, lambda dtypes: parse(_with_dtypes(kwargs, dtypes)))
        except ValueError as e:
            if "chunk_bytes=None" in str(e):
                raise
            # a range that starts inside a quoted value with line breaks parses as other columns
            raise ValueError(f"{e}; or, if quoted values in this file hold line breaks, a chunk boundary fell "
                             "inside one: pass chunk_bytes=None to read each file whole") from e

    def _span(self, term: bytes) -> tuple[bytes, int, int] | None:
        """(header bytes to put first, first byte, end byte) of the lines to read; None when there are none."""
        with open_file(self.path, "rb", self.storage_options) as f:
            size = f.seek(0, os.SEEK_END)
            begin = _line_start(f, self.start, term)
            stop = size if self.end >= size else _line_start(f, self.end, term)
            if self.start == 0:
                return b"", begin, stop
            if begin >= stop:
                return None
            f.seek(0)
            return f.read(self.data_start), begin, stop


class ReadCSVHead(PandasOperator):
    """The first ``nrows`` rows of the files, read in order (pandas' ``nrows``)."""

    params = ("paths", "kwargs", "nrows", "meta", "columns", "renumber", "storage_options")

    def execute(self) -> pd.DataFrame:
        parts, left = [], self.nrows
        for path in self.paths:
            df = read_whole(path, self.kwargs, self.storage_options, nrows=left)
            parts.append(df if self.columns is None else df[self.columns])
            left -= len(df)
            if left <= 0:
                break
        kept = [p for p in parts if len(p)] or parts[:1]
        df = kept[0] if len(kept) == 1 else pd.concat(kept, ignore_index=self.renumber)
        return conform(df, self.meta, f"the first {self.nrows} rows of {self.paths[0]}")


# ----------------------------------------------------------------- the source
class ReadCSV(SourceOp):
    """``md.read_csv``: one chunk per byte range of each file (or per file, or the head only)."""

    params = ("files", "kwargs", "meta", "chunk_bytes", "columns", "nrows", "split", "renumber", "storage_options")

    @classmethod
    def tile(cls, op: ReadCSV) -> Generator[Any, Any, Tiled]:
        meta = op.meta
        if op.nrows is not None:
            chunk_op = ReadCSVHead(paths=[f[0] for f in op.files], kwargs=op.kwargs, nrows=op.nrows, meta=meta,
                                   columns=op.columns, renumber=op.renumber, storage_options=op.storage_options)
            chunk = chunk_op.new_chunk([], index=chunk_index_of(meta, 0), shape=chunk_shape_of(meta, np.nan),
                                       meta=meta)
            return Tiled([chunk], nsplits_of(meta, (np.nan,)))
        chunks = []
        for path, start, end, data_start in op._ranges():
            chunk_op = ReadCSVRange(path=path, start=start, end=end, data_start=data_start, kwargs=op.kwargs,
                                    meta=meta, columns=op.columns, storage_options=op.storage_options)
            chunks.append(chunk_op.new_chunk([], index=chunk_index_of(meta, len(chunks)),
                                             shape=chunk_shape_of(meta, np.nan), meta=meta))
        if op.renumber:
            chunks, nsplits = renumber_rows(chunks, meta)
            return Tiled(chunks, nsplits)
        return Tiled(chunks, nsplits_of(meta, (np.nan,) * len(chunks)))

    def _ranges(self) -> list[tuple]:
        term = _terminator(self.kwargs)
        out = []
        for path, size, _ in self.files:
            if not self.split or _is_compressed(path, self.kwargs):
                out.append((path, 0, None, 0))
                continue
            data_start = _data_start(path, self.kwargs, term, self.storage_options)
            bounds = [0] + _cuts(data_start, size, self.chunk_bytes) + [size]
            out.extend((path, a, b, data_start) for a, b in itertools.pairwise(bounds))
        return out

    def with_columns(self, columns: list) -> Any:
        columns = checked_columns(self.meta, columns)
        if columns is None or isinstance(self.meta.columns, pd.MultiIndex) or callable(self.kwargs.get("usecols")):
            return None
        kwargs = dict(self.kwargs)
        index_names = [] if self.renumber else list(self.meta.index.names)
        if any(not isinstance(c, str) for c in columns + index_names):
            return None
        parse_dates = kwargs.get("parse_dates")
        if isinstance(parse_dates, (list, tuple)):
            if any(not isinstance(c, str) for c in parse_dates):
                return None
            kwargs["parse_dates"] = [c for c in parse_dates if c in columns or c in index_names]
        elif parse_dates not in (None, False, True):
            return None
        kwargs["usecols"] = index_names + columns
        if index_names:
            kwargs["index_col"] = index_names
        meta = self.meta[columns]
        op = self.copy(kwargs=kwargs, meta=meta, columns=columns)
        return op.new_pandas([], meta, (self.outputs[0].shape[0], len(columns))).data

    def with_head(self, n: int) -> Any:
        nrows = n if self.nrows is None else min(n, self.nrows)
        op = self.copy(nrows=nrows)
        return op.new_pandas([], self.meta, (np.nan, self.meta.shape[1])).data


# ----------------------------------------------------------------- metadata
def _sample(path: str, kwargs: dict, sample_bytes: int, nrows: int | None,
            storage_options: dict | None = None) -> pd.DataFrame:
    """pandas' reading of the start of ``path``: what the metadata is taken from."""
    kw = dict(kwargs) if nrows is None else {**kwargs, "nrows": nrows}
    size = file_size(path, storage_options)
    if size <= sample_bytes or kwargs.get("skipfooter", 0):
        return read_whole(path, kw, storage_options)  # all of it (skipfooter: the end is needed too)
    rows_kw = {**kw, "nrows": kw.get("nrows", 10_000)}
    if _is_compressed(path, kwargs) or not _splittable(kwargs):
        return read_whole(path, rows_kw, storage_options)
    term = _terminator(kwargs)
    with open_file(path, "rb", storage_options) as f:
        end = _line_start(f, max(sample_bytes, _data_start(path, kwargs, term, storage_options) + 1), term)
        f.seek(0)
        data = f.read(end)
    try:
        return pd.read_csv(io.BytesIO(data), **kw)
    except pd.errors.ParserError:  # the sample ends inside a quoted field
        return read_whole(path, rows_kw, storage_options)


def _has_line_breaks(sample: pd.DataFrame) -> bool:
    for i, dtype in enumerate(sample.dtypes):
        if dtype == object or isinstance(dtype, pd.StringDtype):
            values = sample.iloc[:, i]
            if values.map(lambda v: isinstance(v, str) and ("\n" in v or "\r" in v)).any():
                return True
    return False


def _date_formats(path: str, kwargs: dict, sample: pd.DataFrame, sample_bytes: int,
                  storage_options: dict | None = None) -> dict | None:
    """Formats of the date columns, guessed from their first value as pandas does for the whole column.

    Each chunk would otherwise guess from its own first value.
    """
    from pandas.tseries.api import guess_datetime_format

    parse_dates = kwargs.get("parse_dates")
    if not isinstance(parse_dates, (list, tuple)) or kwargs.get("date_format") is not None:
        return None
    names = [c for c in parse_dates if isinstance(c, str) and c in sample.columns and sample[c].dtype.kind == "M"]
    if not names:
        return None
    raw = _sample(path, {**kwargs, "parse_dates": None, "dtype": {c: str for c in names}}, sample_bytes, None,
                  storage_options)
    formats = {}
    for c in names:
        values = raw[c].dropna()
        if len(values):
            fmt = guess_datetime_format(values.iloc[0], dayfirst=kwargs.get("dayfirst", False))
            if fmt is not None:
                formats[c] = fmt
    return formats or None


def _check_kwargs(kwargs: dict) -> None:
    for name in ("iterator", "chunksize"):
        if kwargs.get(name):
            raise TypeError(f"md.read_csv reads lazily and returns a DataFrame, not a reader: drop {name}=")
    nrows = kwargs.get("nrows")
    if nrows is not None and (isinstance(nrows, bool) or not isinstance(nrows, (int, np.integer)) or nrows < 0):
        raise ValueError(f"'nrows' must be an integer >=0, got {nrows!r}")
    dtype = kwargs.get("dtype")
    dtypes = dtype.values() if isinstance(dtype, dict) else [dtype]
    if any(isinstance(d, pd.CategoricalDtype) or (isinstance(d, str) and d == "category") for d in dtypes):
        raise NotImplementedError("md.read_csv cannot give category columns (each chunk would find its own "
                                  "categories); read them as 'str' and convert after reading")


def _default_index(path: str, kwargs: dict, sample: pd.DataFrame, sample_bytes: int,
                   storage_options: dict | None) -> bool:
    """Whether pandas numbers the rows ``0..n-1`` rather than reading the index from the file.

    The sample's index type does not say: pandas turns an index column holding
    ``0, 1, 2, ...`` into a ``RangeIndex`` too. ``index_col`` says, and with
    ``index_col=None`` the header line does: one field short of the data makes
    the first column the index ("implicit index"), which pandas warns about
    when told ``index_col=False``.
    """
    index_col = kwargs.get("index_col")
    if index_col is not None:
        return index_col is False
    if not isinstance(sample.index, pd.RangeIndex) or sample.index.names != [None]:
        return False
    if not len(sample):
        return True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _sample(path, {**kwargs, "index_col": False}, sample_bytes, None if kwargs.get("skipfooter") else 5,
                storage_options)
    return not any(issubclass(w.category, pd.errors.ParserWarning) and "length of data" in str(w.message)
                   for w in caught)


def read_csv(path: Any, chunk_bytes: int | str | None = "64M", sample_bytes: int = _SAMPLE_BYTES,
             storage_options: dict | None = None, **kwargs: Any) -> DataFrame:
    """Read CSV files into a lazy DataFrame, in chunks of about ``chunk_bytes`` of text.

    Parameters
    ----------
    path : str, os.PathLike, URL, glob pattern, or a list of them
        Several files are read one after the other (globs in natural order:
        ``part.2`` before ``part.10``); each has its own header line. URLs
        (``s3://``, ``https://``, ``memory://``, ...) are read through fsspec;
        cutting them into chunks needs a filesystem that reads byte ranges.
    chunk_bytes : int, str or None, default "64M"
        At most this many bytes of text per chunk (``"64M"``, ``"1G"``, or an
        int); a file is cut into equal ranges, as many as a multiple of the
        local threads. ``None`` reads each file whole. Compressed files are
        always read whole.
    sample_bytes : int, default 256000
        How much of the first file is read to infer columns and dtypes.
    storage_options : dict, optional
        Given to the fsspec filesystem of a URL (credentials, endpoints).
    **kwargs
        Passed to ``pandas.read_csv`` for every chunk (``sep``, ``names``,
        ``usecols``, ``dtype``, ``parse_dates``, ``index_col``, ...).
        ``nrows`` reads only the first rows (of the files in order).

    Returns
    -------
    DataFrame
        Equal to ``pandas.read_csv`` of the file (of the files concatenated,
        numbered ``0..n-1`` across all of them unless ``index_col`` is given).

    Examples
    --------
    >>> import mars.dataframe as md
    >>> df = md.read_csv("data-*.csv", chunk_bytes="16M")  # doctest: +SKIP
    >>> df.groupby("k").sum().execute()  # doctest: +SKIP
    """
    _check_kwargs(kwargs)
    so = storage_options
    paths = expand_paths(path, so)
    nrows = kwargs.pop("nrows", None)
    cb = None if chunk_bytes is None else parse_bytes(chunk_bytes)
    sample_bytes = parse_bytes(sample_bytes, "sample_bytes")
    for first in paths:  # files with no rows add none: the metadata comes from the first with some
        sample = _sample(first, kwargs, sample_bytes, nrows, so)
        if len(sample) or nrows == 0:
            break
    else:
        first = paths[0]
        sample = _sample(first, kwargs, sample_bytes, nrows, so)
    formats = _date_formats(first, kwargs, sample, sample_bytes, so)
    if formats:
        kwargs["date_format"] = formats
    meta = sample.iloc[:0]
    split = cb is not None and _splittable(kwargs) and not _has_line_breaks(sample)
    renumber = _default_index(first, kwargs, sample, sample_bytes, so)
    op = ReadCSV(files=tuple(file_token(p, so) for p in paths), kwargs=kwargs, meta=meta, chunk_bytes=cb,
                 columns=None, nrows=None if nrows is None else int(nrows), split=split, renumber=renumber,
                 storage_options=so)
    return op.new_pandas([], meta, (np.nan, meta.shape[1]))


# ----------------------------------------------------------------- writing
class WriteCSVPart(WritePart):
    """One partition as CSV: its text made with pyarrow where that equals pandas' (:mod:`.csv_text`), else pandas."""

    def write(self, part: Any, path: Any, kwargs: dict) -> Any:
        text = partition_csv(part, path, kwargs)
        if text is not None:
            return text if path is None else None
        return part.to_csv(path, **kwargs)


class ToCSV(ToFiles):
    """``to_csv`` of a path: one file per partition, or one file."""

    writer = WriteCSVPart


def _concatenable(path: str, kwargs: dict) -> bool:
    """Whether parts written separately make the whole file when appended (no compression, no BOM)."""
    if _is_compressed(path, kwargs):
        return False
    encoding = kwargs.get("encoding") or "utf-8"
    return codecs.lookup(encoding).name not in ("utf-8-sig", "utf-16", "utf-32")


def to_csv(self: Any, path_or_buf: Any = None, *, single_file: bool | None = None, name_function: Any = None,
           storage_options: dict | None = None, session: Any = None, **kwargs: Any) -> Any:
    """Write the DataFrame or Series as CSV, like ``pandas.DataFrame.to_csv``, on the workers.

    Parameters
    ----------
    path_or_buf : str, os.PathLike, URL, file object or None
        A path with one ``*``: one file per partition, the ``*`` replaced by
        the partition number (zero-padded to sort in order) or by
        ``name_function(i)``. A path without: one file, the partitions in
        order (the header once); written in parallel into part files that
        one task appends, unless compressed or with a byte-order mark (then
        one task writes it all). ``None``: the text, computed now, as pandas
        returns it; a file object: written to now.
    single_file : bool, optional
        As in Dask: ``True`` asks for one file (the path has no ``*``),
        ``False`` for one per partition (the path has one).
    storage_options : dict, optional
        Given to the fsspec filesystem of a URL.
    session
        Where a text or file-object write runs (default: the default session).
    **kwargs
        ``pandas.DataFrame.to_csv``'s keywords.

    Returns
    -------
    DataFrame or str or None
        For a path, a lazy object: ``.execute()`` writes the files (and
        returns the object; its value is an empty DataFrame). The text for
        ``None``; ``None`` for a file object.

    Examples
    --------
    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}, chunk_size=1).to_csv(index=False)
    'a\\n1\\n2\\n'
    >>> md.DataFrame({"a": [1, 2]}, chunk_size=1).to_csv("out-*.csv").execute()  # doctest: +SKIP
    """
    data = as_data(self)
    if path_or_buf is not None and hasattr(path_or_buf, "write"):
        text = to_csv(self, None, session=session, **kwargs)
        if isinstance(path_or_buf, (io.RawIOBase, io.BufferedIOBase)):
            text = text.encode(kwargs.get("encoding") or "utf-8")
        path_or_buf.write(text)
        return None
    first = {"header": False, "mode": "w"}
    if path_or_buf is None:
        return text_of(data, ToCSV, kwargs, first, session)
    path = os.fspath(path_or_buf)
    how = choose_how(path, single_file)
    if how == "file" and not is_url(path) and os.path.isdir(local_path(path)):
        raise IsADirectoryError(f"[Errno 21] Is a directory: {path!r}")
    return lazy_write(data, ToCSV, kwargs, path, how, storage_options, _concatenable(path, kwargs),
                      name_function, first)


DataFrame.to_csv = to_csv
Series.to_csv = to_csv
