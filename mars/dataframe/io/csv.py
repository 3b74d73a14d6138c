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
from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ...core.options import options
from ...core.session import resolve_session
from ...core.tiling import as_data
from ..core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
)
from ..rows import single_chunk
from .source import (
    SourceOp,
    checked_columns,
    conform,
    expand_paths,
    file_token,
    parse_bytes,
)
from ..rows import renumber_rows

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


def _data_start(path: str, kwargs: dict, term: bytes) -> int:
    """The byte after the lines pandas reads before the data: ``skiprows`` lines, then the header rows.

    Header rows are counted as pandas counts them: blank lines and comment
    lines do not count when ``skip_blank_lines`` is on.
    """
    skip = int(kwargs.get("skiprows") or 0)
    wanted = _header_lines(kwargs)
    comment = kwargs.get("comment")
    comment = comment.encode() if isinstance(comment, str) else comment
    skip_blank = kwargs.get("skip_blank_lines", True)
    with open(path, "rb") as f:
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


def _terminator(kwargs: dict) -> bytes:
    term = kwargs.get("lineterminator")
    return term.encode() if term else b"\n"


# ----------------------------------------------------------------- the chunk ops
class _RangeFile(io.RawIOBase):
    """The header bytes, then bytes ``[begin, stop)`` of a file, as one stream (nothing copied whole)."""

    def __init__(self, path: str, prefix: bytes, begin: int, stop: int):
        super().__init__()
        self._file = open(path, "rb")  # noqa: SIM115 - closed with this stream
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
        n = self._file.readinto(memoryview(buffer)[:min(len(buffer), self._left)])
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

    params = ("path", "start", "end", "data_start", "kwargs", "meta", "columns")

    def execute(self) -> pd.DataFrame:
        kwargs = self.kwargs
        if self.end is None:
            where = f"file {self.path}"
            df = pd.read_csv(self.path, **kwargs)
            df = df if self.columns is None else df[self.columns]
            return conform(df, self.meta, where)
        span = self._span(_terminator(kwargs))
        if span is None:
            return self.meta.copy()
        where = f"bytes {span[1]}-{span[2]} of {self.path}"

        def parse(kw: dict) -> pd.DataFrame:
            return _parse(io.BufferedReader(_RangeFile(self.path, *span), 1 << 20), kw, self.columns, where)

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
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
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

    params = ("paths", "kwargs", "nrows", "meta", "columns", "renumber")

    def execute(self) -> pd.DataFrame:
        parts, left = [], self.nrows
        for path in self.paths:
            df = pd.read_csv(path, nrows=left, **self.kwargs)
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

    params = ("files", "kwargs", "meta", "chunk_bytes", "columns", "nrows", "split", "renumber")

    @classmethod
    def tile(cls, op: ReadCSV) -> Generator[Any, Any, Tiled]:
        meta = op.meta
        if op.nrows is not None:
            chunk_op = ReadCSVHead(paths=[f[0] for f in op.files], kwargs=op.kwargs, nrows=op.nrows, meta=meta,
                                   columns=op.columns, renumber=op.renumber)
            chunk = chunk_op.new_chunk([], index=chunk_index_of(meta, 0), shape=chunk_shape_of(meta, np.nan),
                                       meta=meta)
            return Tiled([chunk], nsplits_of(meta, (np.nan,)))
        chunks = []
        for path, start, end, data_start in op._ranges():
            chunk_op = ReadCSVRange(path=path, start=start, end=end, data_start=data_start, kwargs=op.kwargs,
                                    meta=meta, columns=op.columns)
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
            data_start = _data_start(path, self.kwargs, term)
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
def _sample(path: str, kwargs: dict, sample_bytes: int, nrows: int | None) -> pd.DataFrame:
    """pandas' reading of the start of ``path``: what the metadata is taken from."""
    kw = dict(kwargs) if nrows is None else {**kwargs, "nrows": nrows}
    size = os.path.getsize(path)
    if size <= sample_bytes or kwargs.get("skipfooter", 0):
        return pd.read_csv(path, **kw)  # all of it (skipfooter: the end is needed too)
    rows_kw = {**kw, "nrows": kw.get("nrows", 10_000)}
    if _is_compressed(path, kwargs) or not _splittable(kwargs):
        return pd.read_csv(path, **rows_kw)
    term = _terminator(kwargs)
    with open(path, "rb") as f:
        end = _line_start(f, max(sample_bytes, _data_start(path, kwargs, term) + 1), term)
        f.seek(0)
        data = f.read(end)
    try:
        return pd.read_csv(io.BytesIO(data), **kw)
    except pd.errors.ParserError:  # the sample ends inside a quoted field
        return pd.read_csv(path, **rows_kw)


def _has_line_breaks(sample: pd.DataFrame) -> bool:
    for i, dtype in enumerate(sample.dtypes):
        if dtype == object or isinstance(dtype, pd.StringDtype):
            values = sample.iloc[:, i]
            if values.map(lambda v: isinstance(v, str) and ("\n" in v or "\r" in v)).any():
                return True
    return False


def _date_formats(path: str, kwargs: dict, sample: pd.DataFrame, sample_bytes: int) -> dict | None:
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
    raw = _sample(path, {**kwargs, "parse_dates": None, "dtype": {c: str for c in names}}, sample_bytes, None)
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


def read_csv(path: Any, chunk_bytes: int | str | None = "64M", sample_bytes: int = _SAMPLE_BYTES,
             **kwargs: Any) -> DataFrame:
    """Read CSV files into a lazy DataFrame, in chunks of about ``chunk_bytes`` of text.

    Parameters
    ----------
    path : str, os.PathLike, glob pattern, or a list of them
        Several files are read one after the other (globs in natural order:
        ``part.2`` before ``part.10``); each has its own header line.
    chunk_bytes : int, str or None, default "64M"
        At most this many bytes of text per chunk (``"64M"``, ``"1G"``, or an
        int); a file is cut into equal ranges, as many as a multiple of the
        local threads. ``None`` reads each file whole. Compressed files are
        always read whole.
    sample_bytes : int, default 256000
        How much of the first file is read to infer columns and dtypes.
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
    paths = expand_paths(path)
    nrows = kwargs.pop("nrows", None)
    cb = None if chunk_bytes is None else parse_bytes(chunk_bytes)
    sample_bytes = parse_bytes(sample_bytes, "sample_bytes")
    for first in paths:  # files with no rows add none: the metadata comes from the first with some
        sample = _sample(first, kwargs, sample_bytes, nrows)
        if len(sample) or nrows == 0:
            break
    else:
        first = paths[0]
        sample = _sample(first, kwargs, sample_bytes, nrows)
    formats = _date_formats(first, kwargs, sample, sample_bytes)
    if formats:
        kwargs["date_format"] = formats
    meta = sample.iloc[:0]
    split = cb is not None and _splittable(kwargs) and not _has_line_breaks(sample)
    op = ReadCSV(files=tuple(file_token(p) for p in paths), kwargs=kwargs, meta=meta, chunk_bytes=cb,
                 columns=None, nrows=None if nrows is None else int(nrows), split=split,
                 renumber=isinstance(meta.index, pd.RangeIndex))
    return op.new_pandas([], meta, (np.nan, meta.shape[1]))


# ----------------------------------------------------------------- writing
def _part_name(path: str, i: int, n: int) -> str:
    """``*`` replaced by the partition number, zero-padded so that the files sort in partition order."""
    return path.replace("*", str(i).zfill(len(str(max(n - 1, 0)))))


class WriteCSVPart(PandasOperator):
    """One partition written to ``path``, or (``path=None``) returned as text in a one-row Series."""

    params = ("path", "kwargs", "number")

    def execute(self, part: Any) -> Any:
        text = part.to_csv(self.path, **self.kwargs)
        if self.path is None:
            return pd.Series([text], index=[self.number], dtype=object)
        return pd.DataFrame()


def _append_file(out: Any, path: str) -> None:
    with open(path, "rb") as f:
        try:
            while os.sendfile(out.fileno(), f.fileno(), None, 1 << 30):
                pass
        except (AttributeError, OSError):  # no sendfile between files here: copy through Python
            f.seek(0)
            out.seek(0, os.SEEK_END)
            while block := f.read(1 << 24):
                out.write(block)


class JoinCSVParts(PandasOperator):
    """Part files appended to ``path`` in order, then removed."""

    params = ("path", "parts", "mode")

    def execute(self, *done: Any) -> pd.DataFrame:
        with open(self.path, self.mode.replace("t", "").replace("b", "") + "b") as out:
            for part in self.parts:
                _append_file(out, part)
                os.remove(part)
        return pd.DataFrame()


class ToCSV(PandasOperator):
    """``to_csv`` in one of three ways (``how``): ``"files"`` (one per partition), ``"file"``, ``"text"``."""

    params = ("path", "kwargs", "how")

    @classmethod
    def tile(cls, op: ToCSV) -> Tiled:
        data = op.inputs[0]
        meta = op.outputs[0].meta
        n = len(data.chunks)
        if op.how == "files":
            chunks = [WriteCSVPart(path=_part_name(op.path, i, n), kwargs=op.kwargs, number=i).new_chunk(
                [c], index=(i, 0), shape=(0, 0), meta=meta) for i, c in enumerate(data.chunks)]
            return Tiled(chunks, ((0,) * n, (0,)))
        if op.how == "file" and not _concatenable(op.path, op.kwargs):
            chunk = WriteCSVPart(path=op.path, kwargs=op.kwargs, number=0).new_chunk(
                [single_chunk(data)], index=(0, 0), shape=(0, 0), meta=meta)
            return Tiled([chunk], ((0,), (0,)))
        parts = []
        for i, c in enumerate(data.chunks):
            kwargs = dict(op.kwargs) if i == 0 else {**op.kwargs, "header": False, "mode": "w"}
            path = None if op.how == "text" else f"{op.path}.{op.key[:12]}.part{i}"
            kw = {"index": (i,), "shape": (1,)} if path is None else {"index": (i, 0), "shape": (0, 0)}
            parts.append(WriteCSVPart(path=path, kwargs=kwargs, number=i).new_chunk([c], meta=meta, **kw))
        if op.how == "text":
            return Tiled(parts, ((1,) * n,))
        join = JoinCSVParts(path=op.path, parts=[p.op.path for p in parts], mode=op.kwargs.get("mode", "w"))
        return Tiled([join.new_chunk(parts, index=(0, 0), shape=(0, 0), meta=meta)], ((0,), (0,)))


def _concatenable(path: str, kwargs: dict) -> bool:
    """Whether parts written separately make the whole file when appended (no compression, no BOM)."""
    if _is_compressed(path, kwargs):
        return False
    encoding = kwargs.get("encoding") or "utf-8"
    return codecs.lookup(encoding).name not in ("utf-8-sig", "utf-16", "utf-32")


def to_csv(self: Any, path_or_buf: Any = None, *, session: Any = None, **kwargs: Any) -> str | None:
    """Write the DataFrame or Series as CSV, like ``pandas.DataFrame.to_csv``; runs right away.

    ``path_or_buf`` with a ``*`` writes one file per partition (the ``*``
    replaced by the partition number, zero-padded to sort in order); a plain
    path writes one file (partitions appended in order, the header once);
    ``None`` returns the text; a file object is written to. Other keyword
    arguments are pandas'. Runs in ``session`` (default: the default session)
    and returns what pandas returns (``None``, or the text).

    Examples
    --------
    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}, chunk_size=1).to_csv(index=False)
    'a\\n1\\n2\\n'
    """
    data = as_data(self)
    sess = resolve_session(session)
    if path_or_buf is not None and hasattr(path_or_buf, "write"):
        text = to_csv(self, None, session=sess, **kwargs)
        if isinstance(path_or_buf, (io.RawIOBase, io.BufferedIOBase)):
            text = text.encode(kwargs.get("encoding") or "utf-8")
        path_or_buf.write(text)
        return None
    path = None if path_or_buf is None else os.fspath(path_or_buf)
    if path is None:
        op = ToCSV(path=None, kwargs=kwargs, how="text")
        texts = op.new_pandas([data], pd.Series([], dtype=object), (len(data.chunks or ()) or np.nan,))
        return "".join(texts.execute(session=sess).fetch(session=sess))
    if "*" not in path and os.path.isdir(path):
        raise IsADirectoryError(f"[Errno 21] Is a directory: {path!r}")
    op = ToCSV(path=path, kwargs=kwargs, how="files" if "*" in path else "file")
    written = op.new_pandas([data], pd.DataFrame(), (0, 0))
    written.execute(session=sess)
    return None


DataFrame.to_csv = to_csv
Series.to_csv = to_csv
