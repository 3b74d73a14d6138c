"""DataFrames, Series and Indexes: the graph nodes and what users hold.

Every pandas-shaped tileable and chunk carries a ``meta``: an *empty* pandas
object of the right kind with the right dtypes, columns, index type and
name. Metadata of a new expression is found by applying the operation to its
inputs' metas (see :mod:`mars.dataframe.meta`), so it matches pandas'.

Partitioning is by rows only: a DataFrame's chunks are ``(i, 0)`` with
``nsplits == (row_counts, (n_columns,))``; a Series' or Index's are ``(i,)``.
A tileable's ``partitioning`` is a token naming its row layout: two tileables
with the same token hold the same rows in the same chunks (an elementwise op
keeps its input's token), so they can be combined chunk by chunk with no data
movement. Sizes known only after running (a filter) are NaN, as for tensors.
"""

from __future__ import annotations

import html
import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..core import reprs
from ..core.entity import ChunkData, Tileable, TileableData, has_unknown
from ..core.operator import Operator
from ..core.options import options
from ..core.session import get_default_session, resolve_session
from ..core.tiling import TILING
from ..tensor.core import TensorChunkData, TensorData, maybe_eager
from .assemble import join_rows


class PandasChunkData(ChunkData):
    """One row partition: ``meta`` is an empty pandas object like its value."""

    __slots__ = ("meta", "partitioning")

    def params(self) -> dict[str, Any]:
        return {"index": self.index, "shape": self.shape, "meta": self.meta}


class PandasData(TileableData):
    """A lazy DataFrame, Series or Index (which one: ``type(meta)``)."""

    __slots__ = ("meta", "partitioning")
    chunk_type = PandasChunkData

    def params(self) -> dict[str, Any]:
        return {"shape": self.shape, "meta": self.meta, "partitioning": self.partitioning}

    @property
    def kind(self) -> str:
        return kind_of(self.meta)

    def assemble(self, values: list) -> Any:
        """The whole pandas object from its chunks' values (in chunk order)."""
        return concat_values(values, self.meta)


def kind_of(meta: Any) -> str:
    if isinstance(meta, pd.DataFrame):
        return "dataframe"
    if isinstance(meta, pd.Series):
        return "series"
    if isinstance(meta, pd.Index):
        return "index"
    raise TypeError(f"not a pandas DataFrame, Series or Index: {type(meta).__name__}")


def concat_values(values: Sequence[Any], meta: Any) -> Any:
    """Chunks' values end to end, as pandas would hold the whole: empty chunks add nothing."""
    kept = [v for v in values if len(v)]
    if not kept:
        return values[0].copy() if values else meta.copy()
    if len(kept) == 1:
        return kept[0].copy()
    if isinstance(kept[0], pd.Index):
        return _keep_object(kept[0].append(kept[1:]), kept[0])
    out = join_rows(kept)  # big partitions of one layout: a column at a time
    if out is None:
        out = pd.concat(kept)
    if isinstance(out.index, pd.Index) and not isinstance(out.index, pd.MultiIndex):
        out.index = _keep_object(out.index, kept[0].index)
    return out


def _keep_object(index: pd.Index, like: pd.Index) -> pd.Index:
    """pandas 3 appends object indexes of strings as ``str``: the whole keeps the parts' dtype."""
    return index.astype(object) if like.dtype == object and index.dtype != object else index


class PandasOperator(Operator):
    """Base of dataframe operators: outputs are DataFrames, Series or Indexes."""

    tileable_type = PandasData

    def new_pandas(self, inputs: list, meta: Any, shape: tuple, partitioning: str | None = None) -> Any:
        """One output tileable with ``meta``; ``partitioning`` defaults to the op's own key."""
        data = self.new_tileable(inputs, shape=tuple(shape), meta=meta, partitioning=partitioning)
        if data.partitioning is None:
            data.partitioning = data.key
        return maybe_eager(wrap(data))

    def new_pandas_many(self, inputs: list, kws: list[dict]) -> list:
        datas = self.new_tileables(inputs, kws)
        for d in datas:
            if getattr(d, "partitioning", None) is None:
                d.partitioning = d.key
        out = [wrap(d) for d in datas]
        if options.eager_mode and not TILING.get():
            resolve_session().execute(*out)
        return out

    def new_scalar(self, inputs: list, dtype: Any) -> Any:
        """A 0-d tensor output (a reduction of a Series to one value)."""
        from ..tensor.core import Tensor

        data = self._apply(inputs, [{"shape": (), "dtype": np.dtype(dtype), "order": "C"}], TensorData)[0]
        return maybe_eager(Tensor(data))

    def new_scalar_chunk(self, inputs: list, dtype: Any, index: tuple = ()) -> TensorChunkData:
        return self._apply(inputs, [{"index": index, "shape": (), "dtype": np.dtype(dtype), "order": "C"}],
                           TensorChunkData)[0]


def chunk_shape_of(meta: Any, rows: float) -> tuple:
    return (rows, meta.shape[1]) if isinstance(meta, pd.DataFrame) else (rows,)


def chunk_index_of(meta: Any, i: int) -> tuple:
    return (i, 0) if isinstance(meta, pd.DataFrame) else (i,)


def nsplits_of(meta: Any, rows: Sequence[float]) -> tuple:
    rows = tuple(rows)
    return (rows, (meta.shape[1],)) if isinstance(meta, pd.DataFrame) else (rows,)


def row_splits(data: PandasData) -> tuple:
    assert data.nsplits is not None, "not tiled"
    return data.nsplits[0]


def wrap(data: Any) -> Any:
    """The user-facing object for ``data`` (DataFrame, Series, Index or Tensor)."""
    if isinstance(data, Tileable):
        return data
    if isinstance(data, TensorData):
        from ..tensor.core import Tensor

        return Tensor(data)
    return _WRAPPERS[data.kind](data)


def as_pandas_data(x: Any) -> Any:
    return x.data if isinstance(x, Tileable) else x


def is_pandas_like(x: Any) -> bool:
    return isinstance(x, (DataFrame, Series, Index, PandasData))


class _Base(Tileable):
    """What DataFrame, Series and Index share."""

    __slots__ = ()
    # binary operations with pandas objects, numpy arrays and mars tensors are left to these objects
    # (``pdf + md_df``, ``tensor | md_series``), which align them as pandas would
    __pandas_priority__ = 5000
    __array_priority__ = 1000
    __mars_defer_binary__ = True

    @property
    def meta(self) -> Any:
        return self._data.meta

    @property
    def partitioning(self) -> str:
        return self._data.partitioning

    def __len__(self) -> int:
        n = self.shape[0]
        if isinstance(n, float) and math.isnan(n):
            raise ValueError(
                f"the length of this {type(self).__name__} is not known before execution; call .execute() first"
            )
        return int(n)

    def to_pandas(self, session: Any = None) -> Any:
        """The computed pandas object (executing first if needed)."""
        return self.fetch(session=session)

    def __repr__(self) -> str:
        session = get_default_session()
        if session is not None and session.is_executed(self):
            return repr(session.fetch(self))  # the whole value is fetched; pandas shows a truncated view
        text = reprs.fields_text(type(self).__name__, self._repr_fields())
        table = self._dtype_table()
        return text if table is None else text + "\n" + table.to_string(max_cols=self._max_cols(), show_dimensions=False)

    def _repr_html_(self) -> str:
        session = get_default_session()
        if session is not None and session.is_executed(self):
            value = session.fetch(self)
            if hasattr(value, "_repr_html_"):
                return value._repr_html_()
            return "<pre>" + html.escape(repr(value)) + "</pre>"
        table = self._dtype_table()
        extra = "" if table is None else table.to_html(max_cols=self._max_cols(), show_dimensions=False)
        return reprs.fields_html(type(self).__name__, self._repr_fields(), extra)

    def _repr_fields(self) -> list[tuple[str, str]]:
        """What is known before running, as ``(name, text)``: rows and their partitions (planned if not run)."""
        meta = self._data.meta
        fields = [] if isinstance(meta, pd.DataFrame) else [("name", repr(meta.name)), ("dtype", str(meta.dtype))]
        nsplits = reprs.planned_nsplits(self._data)
        fields.append(("rows" if isinstance(meta, pd.DataFrame) else "length", reprs.size_text(self.shape[0])))
        fields.append(("npartitions", "?" if nsplits is None else str(len(nsplits[0]))))
        if nsplits is not None:
            fields.append(("partition_rows", reprs.sizes_text(nsplits[0])))
        fields.append(("op", type(self.op).__name__))
        return fields

    def _dtype_table(self) -> pd.DataFrame | None:
        """For a DataFrame, a one-row table: each column above its dtype."""
        meta = self._data.meta
        if not isinstance(meta, pd.DataFrame) or meta.shape[1] == 0:
            return None
        return pd.DataFrame([[str(t) for t in meta.dtypes]], index=["dtype"], columns=meta.columns)

    @staticmethod
    def _max_cols() -> int:
        return pd.get_option("display.max_columns") or 20  # 0 means "fit the terminal" in pandas

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        raise ValueError(
            f"The truth value of a {type(self).__name__} is ambiguous. Use a.empty, a.bool(), a.item(), a.any() or a.all()."
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.fetch(), dtype=dtype)

    @property
    def ndim(self) -> int:
        return self._data.meta.ndim

    @property
    def empty(self) -> bool:
        if has_unknown(self.shape):
            self.execute()
        return math.prod(self.shape) == 0


class DataFrame(_Base):
    """A lazy, row-partitioned pandas DataFrame.

    ``md.DataFrame(data, index=None, columns=None, dtype=None, chunk_size=None)``
    takes what ``pd.DataFrame`` takes (dicts, arrays, pandas objects) and also
    mars tensors and Series.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2, 3]}, chunk_size=2).sum().to_pandas()
    a    6
    dtype: int64
    """

    __slots__ = ()

    def __init__(self, data: Any = None, index: Any = None, columns: Any = None, dtype: Any = None,
                 chunk_size: Any = None, copy: Any = None):
        if isinstance(data, PandasData) and index is None and columns is None and dtype is None and chunk_size is None:
            if data.kind != "dataframe":
                raise TypeError(f"a {data.kind} is not a DataFrame")
            super().__init__(data)
            return
        from .datasource import dataframe_from

        super().__init__(dataframe_from(data, index, columns, dtype, chunk_size).data)

    @property
    def dtypes(self) -> pd.Series:
        return self._data.meta.dtypes

    @property
    def columns(self) -> pd.Index:
        return self._data.meta.columns

    def __getattr__(self, name: str) -> Any:
        # df.a for column "a", as in pandas, "_x" included (only reached when no attribute has that name)
        if not name.startswith("__") and name != "_data":
            try:
                columns = self._data.meta.columns
            except AttributeError:
                columns = ()
            if name in columns:
                return self[name]
        raise AttributeError(f"'DataFrame' object has no attribute {name!r}")

    def __dir__(self) -> list:
        names = [c for c in self._data.meta.columns if isinstance(c, str) and c.isidentifier()]
        return sorted(set(super().__dir__()) | set(names))

    def __iter__(self) -> Any:
        return iter(self._data.meta.columns)

    def keys(self) -> pd.Index:
        return self._data.meta.columns

    def __contains__(self, key: Any) -> bool:
        return key in self._data.meta.columns


class Series(_Base):
    """A lazy, row-partitioned pandas Series.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 3], chunk_size=2).to_pandas().tolist()
    [1, 2, 3]
    """

    __slots__ = ()

    def __init__(self, data: Any = None, index: Any = None, dtype: Any = None, name: Any = None,
                 chunk_size: Any = None, copy: Any = None):
        if isinstance(data, PandasData) and index is None and dtype is None and name is None and chunk_size is None:
            if data.kind != "series":
                raise TypeError(f"a {data.kind} is not a Series")
            super().__init__(data)
            return
        from .datasource import series_from

        super().__init__(series_from(data, index, dtype, name, chunk_size).data)

    @property
    def dtype(self) -> np.dtype:
        return self._data.meta.dtype

    dtypes = dtype

    @property
    def name(self) -> Any:
        return self._data.meta.name

    def __iter__(self) -> Any:
        return iter(self.fetch())

    def tolist(self) -> list:
        """The computed values as a list."""
        return self.fetch().tolist()

    to_list = tolist


class Index(_Base):
    """A lazy pandas Index (``df.index``, or ``md.Index(values)``)."""

    __slots__ = ()

    def __init__(self, data: Any = None, dtype: Any = None, name: Any = None, chunk_size: Any = None):
        if isinstance(data, PandasData) and dtype is None and name is None and chunk_size is None:
            if data.kind != "index":
                raise TypeError(f"a {data.kind} is not an Index")
            super().__init__(data)
            return
        from .datasource import index_from

        super().__init__(index_from(data, dtype, name, chunk_size).data)

    @property
    def dtype(self) -> np.dtype:
        return self._data.meta.dtype

    @property
    def name(self) -> Any:
        return self._data.meta.name

    @property
    def names(self) -> list:
        return list(self._data.meta.names)

    def __iter__(self) -> Any:
        return iter(self.fetch())

    def tolist(self) -> list:
        """The computed values as a list."""
        return self.fetch().tolist()

    to_list = tolist


_WRAPPERS: dict[str, type] = {"dataframe": DataFrame, "series": Series, "index": Index}
