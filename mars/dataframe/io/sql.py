"""SQL tables and queries: ``md.read_sql``, ``read_sql_table``, ``read_sql_query``.

A table or query is read in pages of ``chunk_size`` rows (``LIMIT``/``OFFSET``
in the order the database returns the rows: put an ``ORDER BY`` in a query
when the database does not keep one, as SQLite does for tables), or, with
``partition_col=``, in ``num_partitions`` ranges of that column between its
minimum and maximum (rows then come range by range). Each page is turned into
a DataFrame by pandas' own conversion (``read_sql_table`` harmonizes the
columns with the table's SQL types, ``read_sql_query`` infers from values).

The connection travels as its SQLAlchemy URL (an engine does not pickle);
each process makes one engine per URL. When the expression is built, one
query counts the rows and the non-null values of each column, so the
metadata says what pandas would give for the whole result (an integer column
with a NULL anywhere is float64), not only for the first page.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Generator
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ..core import DataFrame, PandasOperator, chunk_index_of, chunk_shape_of, nsplits_of
from ..datasource import auto_rows
from ..rows import numbered
from .source import SourceOp, checked_columns, conform, count_rows

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["read_sql", "read_sql_query", "read_sql_table"]

_SAMPLE_ROWS = 1000


def _sqlalchemy() -> ModuleType:
    """SQLAlchemy, imported on first use: it is optional, and ``mars.dataframe`` imports without it."""
    try:
        import sqlalchemy
    except ImportError as e:
        raise ImportError("read_sql needs SQLAlchemy: pip install 'pymars[sql]'") from e
    return sqlalchemy


@functools.lru_cache(maxsize=32)
def _engine(url: str) -> sa.engine.Engine:
    return _sqlalchemy().create_engine(url)


def _url(con: Any) -> str:
    """The URL of a SQLAlchemy URL string, engine or connection: what is sent to the workers."""
    sa = _sqlalchemy()
    if isinstance(con, str):
        url = sa.engine.make_url(con)
    elif isinstance(con, (sa.engine.Engine, sa.engine.Connection)):
        url = con.engine.url
    else:
        raise TypeError(f"con must be a SQLAlchemy URL string or engine, got {type(con).__name__} (a DBAPI "
                        "connection cannot be sent to the processes that read the chunks)")
    if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
        raise ValueError("an in-memory SQLite database cannot be read by other connections; use a file")
    return url.render_as_string(hide_password=False)


@dataclasses.dataclass(frozen=True)
class SQLSource:
    """What to read and how pandas converts it: a table (``table``) or a query (``sql``)."""

    url: str
    table: str | None = None
    schema: str | None = None
    sql: str | None = None
    params: Any = None
    columns: tuple | None = None
    index_col: Any = None
    coerce_float: bool = True
    parse_dates: Any = None
    dtype: Any = None
    dtype_backend: str = "numpy"

    @property
    def index_names(self) -> list:
        if self.index_col is None:
            return []
        return list(self.index_col) if isinstance(self.index_col, (list, tuple)) else [self.index_col]


class _Reading:
    """One connection's worth of reading a source: raw rows of a page, and pandas' conversion of rows."""

    def __init__(self, source: SQLSource):
        from pandas.io.sql import SQLDatabase, SQLTable

        self.source = source
        self.engine = _engine(source.url)
        self.db = SQLDatabase(self.engine, schema=source.schema)
        self.tbl = None
        if source.table is not None:
            self.db.meta.reflect(bind=self.db.con, only=[source.table], views=True)
            # pandas' table reader: its column selection and its type harmonization
            self.tbl = SQLTable(source.table, self.db, index=source.index_col, schema=source.schema)

    def __enter__(self) -> _Reading:  # noqa: PYI034 - a final class
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.exit_stack.close()

    def _quote(self, name: str) -> str:
        return self.engine.dialect.identifier_preparer.quote(name)

    def _literal(self, value: Any) -> str:
        sa = _sqlalchemy()
        return str(sa.literal(value).compile(dialect=self.engine.dialect, compile_kwargs={"literal_binds": True}))

    def _condition(self, where: tuple | None) -> Any:
        """``where``: ``(col, "null"|"notnull")`` or ``(col, lo, hi, hi_included)``."""
        if where is None:
            return None
        col = where[0]
        if self.tbl is not None:
            c = self.tbl.table.c[col]
            if where[1] in ("null", "notnull"):
                return c.is_(None) if where[1] == "null" else c.isnot(None)
            return _sqlalchemy().and_(c >= where[1], c <= where[2] if where[3] else c < where[2])
        q = self._quote(col)
        if where[1] in ("null", "notnull"):
            return f"{q} IS NULL" if where[1] == "null" else f"{q} IS NOT NULL"
        return f"{q} >= {self._literal(where[1])} AND {q} {'<=' if where[3] else '<'} {self._literal(where[2])}"

    def _selected(self) -> list | None:
        cols = self.source.columns
        return None if cols is None else self.source.index_names + [c for c in cols if c not in self.source.index_names]

    def rows(self, where: tuple | None = None, limit: int | None = None, offset: int = 0) -> tuple[list, list]:
        """Raw rows (and the column names) of the source, optionally one page or range of it."""
        cond = self._condition(where)
        cols = self._selected()
        if self.tbl is not None:
            sa, table = _sqlalchemy(), self.tbl.table
            stmt = sa.select(*[table.c[c] for c in cols]) if cols else sa.select(table)
            stmt = stmt if cond is None else stmt.where(cond)
            stmt = stmt if limit is None else stmt.limit(limit).offset(offset)
            result = self.db.execute(stmt)
        else:
            what = ", ".join(self._quote(c) for c in cols) if cols else "*"
            text = f"SELECT {what} FROM ({self.source.sql}) AS _mars_q"
            text += "" if cond is None else f" WHERE {cond}"
            text += "" if limit is None else f" LIMIT {int(limit)} OFFSET {int(offset)}"
            result = self.db.execute(text, self.source.params)
        return list(result.keys()), result.fetchall()

    def frame(self, names: list, rows: list) -> pd.DataFrame:
        """pandas' DataFrame of ``rows`` (before the index is set)."""
        from pandas.io.sql import _convert_arrays_to_dataframe, _wrap_result

        s = self.source
        if self.tbl is None:
            return _wrap_result(rows, names, coerce_float=s.coerce_float, parse_dates=s.parse_dates, dtype=s.dtype,
                                dtype_backend=s.dtype_backend)
        self.tbl.frame = _convert_arrays_to_dataframe(rows, names, s.coerce_float, s.dtype_backend)
        self.tbl._harmonize_columns(parse_dates=s.parse_dates, dtype_backend=s.dtype_backend)
        return self.tbl.frame

    def counts(self, names: list) -> list[int]:
        """Rows, then non-null values of each of ``names``, over the whole source (one query)."""
        if self.tbl is not None:
            sa, table = _sqlalchemy(), self.tbl.table
            stmt = sa.select(sa.func.count(), *[sa.func.count(table.c[n]) for n in names])
            return list(self.db.execute(stmt.select_from(table)).fetchone())
        what = ", ".join(["COUNT(*)"] + [f"COUNT({self._quote(n)})" for n in names])
        return list(self.db.execute(f"SELECT {what} FROM ({self.source.sql}) AS _mars_q", self.source.params).fetchone())

    def bounds(self, col: str) -> tuple:
        if self.tbl is not None:
            sa, c = _sqlalchemy(), self.tbl.table.c[col]
            return tuple(self.db.execute(sa.select(sa.func.min(c), sa.func.max(c))).fetchone())
        q = self._quote(col)
        text = f"SELECT MIN({q}), MAX({q}) FROM ({self.source.sql}) AS _mars_q"
        return tuple(self.db.execute(text, self.source.params).fetchone())


def _with_index(df: pd.DataFrame, source: SQLSource, start: int | None) -> pd.DataFrame:
    if source.index_col is not None:
        return df.set_index(source.index_col)
    if start is not None:
        return df.set_axis(pd.RangeIndex(start, start + len(df)), axis=0)
    return df


class ReadSQLPart(PandasOperator):
    """One page (``limit`` rows from ``offset``) or range (``where``) of a SQL source.

    ``start`` is the first row's number for the default index (None: numbered later).
    """

    params = ("source", "where", "limit", "offset", "start", "raw_meta")

    def execute(self) -> pd.DataFrame:
        with _Reading(self.source) as r:
            names, rows = r.rows(self.where, self.limit, self.offset or 0)
            df = r.frame(names, rows)
        where = f"rows {self.offset}-{self.offset + self.limit}" if self.where is None else f"range {self.where}"
        df = conform(df, self.raw_meta, f"{where} of {self.source.table or 'the query'}")
        return _with_index(df, self.source, self.start)


class ReadSQL(SourceOp):
    """``md.read_sql``: pages of ``chunk_size`` rows of ``total``, or ranges of ``partition_col``."""

    params = ("source", "raw_meta", "meta", "total", "chunk_size", "partition_col", "num_partitions")

    @classmethod
    def tile(cls, op: ReadSQL) -> Generator[Any, Any, Tiled]:
        meta = op.meta
        if op.partition_col is None:
            rows = auto_rows(meta, op.total, op.chunk_size)
            chunks, offset = [], 0
            for i, n in enumerate(rows):
                part = ReadSQLPart(source=op.source, where=None, limit=n, offset=offset, start=offset,
                                   raw_meta=op.raw_meta)
                chunks.append(part.new_chunk([], index=chunk_index_of(meta, i), shape=chunk_shape_of(meta, n),
                                             meta=meta))
                offset += n
            return Tiled(chunks, nsplits_of(meta, rows))
        chunks = []
        for i, where in enumerate(op._ranges()):
            part = ReadSQLPart(source=op.source, where=where, limit=None, offset=None, start=None,
                               raw_meta=op.raw_meta)
            chunks.append(part.new_chunk([], index=chunk_index_of(meta, i), shape=chunk_shape_of(meta, np.nan),
                                         meta=meta))
        if op.source.index_col is not None:
            return Tiled(chunks, nsplits_of(meta, (np.nan,) * len(chunks)))
        rows = yield from count_rows(chunks)
        return Tiled(numbered(chunks, rows, meta), nsplits_of(meta, rows))

    def _ranges(self) -> list[tuple]:
        with _Reading(self.source) as r:
            lo, hi = r.bounds(self.partition_col)
            nulls = r.counts([self.partition_col])
        out: list[tuple] = []
        if lo is not None:
            n = max(1, int(self.num_partitions))
            cuts = _cuts(lo, hi, n)
            out = [(self.partition_col, a, b, i == len(cuts) - 2) for i, (a, b) in enumerate(itertools.pairwise(cuts))]
        if nulls[0] > nulls[1] or not out:
            out.append((self.partition_col, "null"))
        return out

    def with_columns(self, columns: list) -> Any:
        columns = checked_columns(self.meta, columns)
        if columns is None:
            return None
        source = dataclasses.replace(self.source, columns=tuple(columns))
        keep = self.source.index_names + columns
        raw_meta = self.raw_meta[keep]
        meta = self.meta[columns]
        op = self.copy(source=source, raw_meta=raw_meta, meta=meta)
        return op.new_pandas([], meta, (self.outputs[0].shape[0], len(columns))).data

    def with_head(self, n: int) -> Any:
        if self.partition_col is not None:
            return None
        op = self.copy(total=min(n, self.total))
        return op.new_pandas([], self.meta, (op.total, self.meta.shape[1])).data


def _cuts(lo: Any, hi: Any, n: int) -> list:
    """``n + 1`` increasing bounds from ``lo`` to ``hi`` (numbers or datetimes; fewer when they repeat)."""
    if isinstance(lo, (int, np.integer)) and isinstance(hi, (int, np.integer)):
        cuts = [int(v) for v in np.linspace(int(lo), int(hi), n + 1).round()]
    elif isinstance(lo, (float, np.floating, int, np.integer)):
        cuts = list(np.linspace(float(lo), float(hi), n + 1))
    else:
        a, b = pd.Timestamp(lo), pd.Timestamp(hi)
        cuts = [(a + (b - a) * i / n).to_pydatetime() for i in range(n + 1)]
        cuts[0], cuts[-1] = lo, hi
    cuts = [c.item() if isinstance(c, np.generic) else c for c in cuts]
    cuts = sorted(set(cuts), key=cuts.index)
    return cuts if len(cuts) > 1 else [lo, hi]


# ----------------------------------------------------------------- metadata
def _infer_meta(source: SQLSource) -> tuple[pd.DataFrame, int]:
    """The raw metadata (before the index is set) of the whole result, and its row count.

    From the first rows, plus, for each column whose nulls the first rows do
    not show as the whole result has them, a row with a NULL (or rows with
    values) there: pandas' conversion of those rows gives the dtypes that it
    gives for the whole.
    """
    with _Reading(source) as r:
        names, rows = r.rows(limit=_SAMPLE_ROWS)
        counts = r.counts(names)
        total, rows = counts[0], list(rows)
        for j, (name, nonnull) in enumerate(zip(names, counts[1:])):
            sample_nonnull = sum(row[j] is not None for row in rows)
            sample_null = len(rows) - sample_nonnull
            if nonnull < total and sample_null == 0:
                rows += r.rows((name, "null"), limit=1)[1]
            if nonnull > 0 and sample_nonnull == 0:
                rows += r.rows((name, "notnull"), limit=_SAMPLE_ROWS)[1]
        frame = r.frame(names, rows)
    missing = [c for c in source.index_names if c not in frame.columns]
    if missing:
        raise KeyError(f"index_col {missing} not among the columns {list(frame.columns)}")
    return frame.iloc[:0], total


def _source_meta(source: SQLSource, chunk_size: Any, partition_col: str | None,
                 num_partitions: int | None) -> DataFrame:
    raw_meta, total = _infer_meta(source)
    meta = _with_index(raw_meta, source, 0)
    if source.columns is not None:
        meta = meta[[c for c in source.columns if c not in source.index_names]]
    if partition_col is not None:
        if partition_col not in raw_meta.columns:
            raise KeyError(f"partition_col {partition_col!r} is not a column of the result: {list(raw_meta.columns)}")
        if num_partitions is None:
            num_partitions = len(auto_rows(meta, total, chunk_size))
    op = ReadSQL(source=source, raw_meta=raw_meta, meta=meta, total=total, chunk_size=chunk_size,
                 partition_col=partition_col, num_partitions=num_partitions)
    rows = total if partition_col is None else np.nan
    return op.new_pandas([], meta, (rows, meta.shape[1]))


def _backend(dtype_backend: Any) -> str:
    return "numpy" if dtype_backend is pd.api.extensions.no_default else dtype_backend


def read_sql_table(table_name: str, con: Any, schema: str | None = None, index_col: Any = None,
                   coerce_float: bool = True, parse_dates: Any = None, columns: list | None = None,
                   chunk_size: int | None = None, dtype_backend: Any = pd.api.extensions.no_default,
                   partition_col: str | None = None, num_partitions: int | None = None) -> DataFrame:
    """Read a SQL table into a lazy DataFrame, in pages of ``chunk_size`` rows.

    Parameters are ``pandas.read_sql_table``'s, with ``con`` a SQLAlchemy URL
    or engine, and: ``chunk_size`` (rows per chunk; default sized by
    ``options.chunk_store_limit``); ``partition_col`` and ``num_partitions``
    to read ranges of a numeric or datetime column instead of pages (rows then
    come in ranges of that column: equal to pandas when the table is in that
    order).

    Examples
    --------
    >>> import mars.dataframe as md
    >>> df = md.read_sql_table("trades", "sqlite:///trades.db", chunk_size=100_000)  # doctest: +SKIP
    """
    source = SQLSource(url=_url(con), table=table_name, schema=schema, index_col=index_col,
                       coerce_float=coerce_float, parse_dates=parse_dates,
                       columns=None if columns is None else tuple(columns), dtype_backend=_backend(dtype_backend))
    if not _sqlalchemy().inspect(_engine(source.url)).has_table(table_name, schema=schema):
        raise ValueError(f"Table {table_name} not found")
    return _source_meta(source, chunk_size, partition_col, num_partitions)


def read_sql_query(sql: Any, con: Any, index_col: Any = None, coerce_float: bool = True, params: Any = None,
                   parse_dates: Any = None, chunk_size: int | None = None, dtype: Any = None,
                   dtype_backend: Any = pd.api.extensions.no_default, partition_col: str | None = None,
                   num_partitions: int | None = None) -> DataFrame:
    """Read the result of a SQL query into a lazy DataFrame, in pages of ``chunk_size`` rows.

    Pages are ``SELECT * FROM (<sql>) LIMIT n OFFSET k``: give the query an
    ``ORDER BY`` when the database does not return rows in a stable order.
    Other parameters as for :func:`read_sql_table` and ``pandas.read_sql_query``.

    Examples
    --------
    >>> import mars.dataframe as md
    >>> df = md.read_sql_query("SELECT * FROM trades ORDER BY id", "sqlite:///trades.db")  # doctest: +SKIP
    """
    url = _url(con)
    if not isinstance(sql, str):  # a SQLAlchemy selectable: its text for this database
        sql = str(sql.compile(dialect=_engine(url).dialect, compile_kwargs={"literal_binds": True}))
    source = SQLSource(url=url, sql=sql.strip().rstrip(";"), params=params, index_col=index_col,
                       coerce_float=coerce_float, parse_dates=parse_dates, dtype=dtype,
                       dtype_backend=_backend(dtype_backend))
    return _source_meta(source, chunk_size, partition_col, num_partitions)


def read_sql(sql: Any, con: Any, index_col: Any = None, coerce_float: bool = True, params: Any = None,
             parse_dates: Any = None, columns: list | None = None, chunk_size: int | None = None,
             dtype_backend: Any = pd.api.extensions.no_default, dtype: Any = None,
             partition_col: str | None = None, num_partitions: int | None = None) -> DataFrame:
    """Read a SQL table (``sql`` its name) or query into a lazy DataFrame, like ``pandas.read_sql``.

    See :func:`read_sql_table` and :func:`read_sql_query`.

    Examples
    --------
    >>> import mars.dataframe as md
    >>> md.read_sql("trades", "sqlite:///trades.db", index_col="id").execute()  # doctest: +SKIP
    """
    url = _url(con)
    if isinstance(sql, str) and _sqlalchemy().inspect(_engine(url)).has_table(sql):
        return read_sql_table(sql, url, index_col=index_col, coerce_float=coerce_float, parse_dates=parse_dates,
                              columns=columns, chunk_size=chunk_size, dtype_backend=dtype_backend,
                              partition_col=partition_col, num_partitions=num_partitions)
    return read_sql_query(sql, url, index_col=index_col, coerce_float=coerce_float, params=params,
                          parse_dates=parse_dates, chunk_size=chunk_size, dtype=dtype, dtype_backend=dtype_backend,
                          partition_col=partition_col, num_partitions=num_partitions)
