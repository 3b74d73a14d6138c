"""``Series.list`` and ``Series.struct``: pandas' accessors of pyarrow list and struct values, per partition.

Each method is pandas' own accessor method run on every partition (a list's
length, its flattened items, an item or slice of each list; a struct's
fields). Their metadata is pandas' answer on the empty metadata, so it is
known before running; ``struct.dtypes`` needs nothing to run at all.

>>> import pandas as pd, pyarrow as pa
>>> import mars.dataframe as md
>>> s = md.Series(pd.Series([[1, 2], [3]], dtype=pd.ArrowDtype(pa.list_(pa.int64()))), chunk_size=1)
>>> s.list.len().to_pandas().tolist()
[2, 1]
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .core import DataFrame, Series
from .map import map_partitions
from .meta import empty_meta

__all__: list[str] = []


def _list_call(part: pd.Series, name: str, args: tuple) -> Any:
    return getattr(part.list, name)(*args)


def _list_item(part: pd.Series, key: Any) -> pd.Series:
    return part.list[key]


def _struct_call(part: pd.Series, name: str, args: tuple) -> Any:
    return getattr(part.struct, name)(*args)


class ListAccessor:
    """``s.list``: methods of pyarrow list values of a lazy Series, as ``pandas.Series.list``.

    >>> import pandas as pd, pyarrow as pa
    >>> import mars.dataframe as md
    >>> s = md.Series(pd.Series([[1, 2], [3]], dtype=pd.ArrowDtype(pa.list_(pa.int64()))))
    >>> s.list[0].to_pandas().tolist()
    [1, 3]
    """

    def __init__(self, obj: Series):
        obj.meta.list  # noqa: B018 - pandas' AttributeError for a dtype that holds no lists
        self._obj = obj

    def _run(self, name: str, *args: Any, same_rows: bool = True) -> Series:
        meta = empty_meta(getattr(self._obj.meta.list, name)(*args))
        return map_partitions(_list_call, self._obj, name, args, meta=meta, same_rows=same_rows)

    def len(self) -> Series:
        """Each list's length (missing for a missing list), as ``pandas.Series.list.len``.

        >>> import pandas as pd, pyarrow as pa
        >>> import mars.dataframe as md
        >>> s = md.Series(pd.Series([[1, 2], None], dtype=pd.ArrowDtype(pa.list_(pa.int64()))))
        >>> s.list.len().to_pandas().tolist()
        [2, <NA>]
        """
        return self._run("len")

    def flatten(self) -> Series:
        """Every list's items, one row each under its list's label, as ``pandas.Series.list.flatten``.

        >>> import pandas as pd, pyarrow as pa
        >>> import mars.dataframe as md
        >>> s = md.Series(pd.Series([[1, 2], [3]], dtype=pd.ArrowDtype(pa.list_(pa.int64()))), chunk_size=1)
        >>> s.list.flatten().to_pandas().index.tolist()
        [0, 0, 1]
        """
        return self._run("flatten", same_rows=False)

    def __getitem__(self, key: int | slice) -> Series:
        """The item at ``key`` (an int: pyarrow's error when a list is too short) or a slice of each list."""
        sample = self._obj.meta
        if isinstance(key, slice):  # one missing list: pyarrow checks the slice then, as pandas' call would
            sample = pd.Series([None], dtype=sample.dtype, name=sample.name)
        meta = empty_meta(sample.list[key])
        return map_partitions(_list_item, self._obj, key, meta=meta)

    def __iter__(self) -> Any:
        raise TypeError(f"'{type(self).__name__}' object is not iterable")


class StructAccessor:
    """``s.struct``: fields of pyarrow struct values of a lazy Series, as ``pandas.Series.struct``.

    >>> import pandas as pd, pyarrow as pa
    >>> import mars.dataframe as md
    >>> t = pd.ArrowDtype(pa.struct([("a", pa.int64()), ("b", pa.string())]))
    >>> s = md.Series(pd.Series([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], dtype=t), chunk_size=1)
    >>> s.struct.field("b").to_pandas().tolist()
    ['x', 'y']
    """

    def __init__(self, obj: Series):
        obj.meta.struct  # noqa: B018 - pandas' AttributeError for a dtype that holds no structs
        self._obj = obj

    def _run(self, name: str, *args: Any) -> Any:
        meta = empty_meta(getattr(self._obj.meta.struct, name)(*args))
        return map_partitions(_struct_call, self._obj, name, args, meta=meta)

    @property
    def dtypes(self) -> pd.Series:
        """Each field's dtype, by field name (known without running), as ``pandas.Series.struct.dtypes``.

        >>> import pandas as pd, pyarrow as pa
        >>> import mars.dataframe as md
        >>> t = pd.ArrowDtype(pa.struct([("a", pa.int64())]))
        >>> md.Series(pd.Series([{"a": 1}], dtype=t)).struct.dtypes.to_dict()
        {'a': int64[pyarrow]}
        """
        return self._obj.meta.struct.dtypes

    def field(self, name_or_index: Any) -> Series:
        """One field (a name, a position, a list of them for a nested field, or a pyarrow expression).

        >>> import pandas as pd, pyarrow as pa
        >>> import mars.dataframe as md
        >>> t = pd.ArrowDtype(pa.struct([("a", pa.int64())]))
        >>> md.Series(pd.Series([{"a": 1}, {"a": 2}], dtype=t), chunk_size=1).struct.field(0).to_pandas().tolist()
        [1, 2]
        """
        return self._run("field", name_or_index)

    def explode(self) -> DataFrame:
        """A DataFrame with one column per field, as ``pandas.Series.struct.explode``.

        >>> import pandas as pd, pyarrow as pa
        >>> import mars.dataframe as md
        >>> t = pd.ArrowDtype(pa.struct([("a", pa.int64()), ("b", pa.string())]))
        >>> s = md.Series(pd.Series([{"a": 1, "b": "x"}], dtype=t))
        >>> s.struct.explode().to_pandas().columns.tolist()
        ['a', 'b']
        """
        return self._run("explode")


Series.list = property(ListAccessor, doc="Methods of pyarrow list values (``pandas.Series.list``).")
Series.struct = property(StructAccessor, doc="Fields of pyarrow struct values (``pandas.Series.struct``).")
