"""``DataFrame.to_sql`` / ``Series.to_sql``: lazily, a transaction per partition, through SQLAlchemy.

The first partition runs first and alone: it creates the table (or replaces
it, or fails, as ``if_exists`` says) and inserts its rows, in one
transaction. Then every other partition appends its rows in its own
transaction, in parallel: a failed partition rolls back only its own rows.
The connection travels as its SQLAlchemy URL, as for reading.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...core.operator import Tiled
from ...core.tiling import as_data
from ..core import DataFrame, PandasOperator, Series
from .sql import _engine, _url

__all__: list[str] = []

_IF_EXISTS = ("fail", "replace", "append", "delete_rows")


class WriteSQLPart(PandasOperator):
    """One partition inserted in one transaction (after the ops of its other inputs, which return nothing)."""

    params = ("name", "url", "if_exists", "kwargs")

    def execute(self, part: Any, *after: Any) -> pd.DataFrame:
        with _engine(self.url).begin() as conn:
            part.to_sql(self.name, conn, if_exists=self.if_exists, **self.kwargs)
        return pd.DataFrame()


class ToSQL(PandasOperator):
    """``to_sql``: the first partition creates the table, then the others append in parallel."""

    params = ("name", "url", "if_exists", "kwargs")

    @classmethod
    def tile(cls, op: ToSQL) -> Tiled:
        chunks = list(op.inputs[0].chunks)
        meta = op.outputs[0].meta
        first = WriteSQLPart(name=op.name, url=op.url, if_exists=op.if_exists, kwargs=op.kwargs).new_chunk(
            [chunks[0]], index=(0, 0), shape=(0, 0), meta=meta)
        out = [first]
        for i, c in enumerate(chunks[1:], 1):
            part = WriteSQLPart(name=op.name, url=op.url, if_exists="append", kwargs=op.kwargs)
            out.append(part.new_chunk([c, first], index=(i, 0), shape=(0, 0), meta=meta))
        return Tiled(out, ((0,) * len(out), (0,)))


def to_sql(self: Any, name: str, con: Any, *, schema: str | None = None, if_exists: str = "fail",
           index: bool = True, index_label: Any = None, chunksize: int | None = None, dtype: Any = None,
           method: Any = None) -> DataFrame:
    """Write the rows to a SQL table, like ``pandas.DataFrame.to_sql``, a transaction per partition.

    Parameters
    ----------
    name, schema, if_exists, index, index_label, chunksize, dtype, method
        As for ``pandas.DataFrame.to_sql``; ``if_exists`` applies to the
        table as a whole (the first partition's write), the other partitions
        append.
    con : str or sqlalchemy.engine.Engine
        A SQLAlchemy URL or engine (not a DBAPI connection: each worker
        connects by URL). An in-memory SQLite database cannot be shared.

    Returns
    -------
    DataFrame
        A lazy object: ``.execute()`` writes (and returns the object; its
        value is an empty DataFrame).

    Examples
    --------
    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}).to_sql("t", "sqlite:///t.db", index=False).execute()  # doctest: +SKIP
    """
    if if_exists not in _IF_EXISTS:
        raise ValueError(f"'{if_exists}' is not valid for if_exists")
    kwargs = {"schema": schema, "index": index, "index_label": index_label, "chunksize": chunksize,
              "dtype": dtype, "method": method}
    op = ToSQL(name=name, url=_url(con), if_exists=if_exists, kwargs=kwargs)
    return op.new_pandas([as_data(self)], pd.DataFrame(), (0, 0))


DataFrame.to_sql = to_sql
Series.to_sql = to_sql
