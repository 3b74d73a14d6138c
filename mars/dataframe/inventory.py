"""The pandas names that ``mars.dataframe`` does not provide, and what to use instead.

Two tables keyed ``"Owner.name"``: :data:`LEFT_OUT` holds names left out on
purpose (plotting, the clipboard, Excel, LaTeX, Stata, the styler: work that
draws or formats an in-memory table on the client), :data:`NOT_YET` names
that fit a partitioned engine and are still to be written. Owners are the
user-facing mars classes: ``DataFrame``, ``Series``, ``Index``,
``DataFrameGroupBy``, ``SeriesGroupBy``, ``Rolling``, ``Expanding``,
``ExponentialMovingWindow`` and the accessors ``str``, ``dt`` and ``cat``.

:func:`install` gives each owner class an attribute per listed name that
raises :class:`NotProvidedError` (a ``NotImplementedError``) with the
advice, so ``df.plot`` says what to do instead of "no attribute". The list in
``docs/dataframe.md`` is rendered from these tables (``python -m
mars.dataframe.inventory``), and a test keeps the two equal and checks that
every public pandas name is provided or listed.

>>> import mars.dataframe as md
>>> try:
...     md.DataFrame({"a": [1]}).to_clipboard
... except NotImplementedError as e:
...     print(str(e).split(":")[0])
mars.dataframe's DataFrame does not provide to_clipboard
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

_DRAW = "plotting draws on the client: {obj}.to_pandas().{name}(...) (aggregate or sample() first for big data)"
_CLIENT_WRITE = ("writes one file from the client: {obj}.to_pandas().{name}(...); to write in parallel, "
                 "to_parquet or to_csv with a '*' in the path")
_CLIENT_ONLY = "{what}: {obj}.to_pandas().{name}"
_IN_MEMORY_META = "pandas' experimental metadata of an in-memory object"


def _each(owners: tuple[str, ...], names: tuple[str, ...], text: str, what: str = "") -> dict[str, str]:
    """``{"Owner.name": advice}`` for every owner and name, ``{obj}``/``{name}``/``{what}`` filled in."""
    out = {}
    for owner in owners:
        obj = {"DataFrame": "df", "Series": "s", "Index": "idx"}.get(owner, "df")
        for name in names:
            out[f"{owner}.{name}"] = text.format(obj=obj, name=name, what=what)
    return out


_FRAMES = ("DataFrame", "Series")
_GROUPBYS = ("DataFrameGroupBy", "SeriesGroupBy")

#: "Owner.name" → what to use instead, for names left out on purpose
LEFT_OUT: dict[str, str] = {
    **_each(_FRAMES, ("plot", "hist"), _DRAW),
    **_each(("DataFrame",), ("boxplot",), _DRAW),
    **{f"{g}.{n}": f"plotting draws on the client: df.to_pandas().groupby(...).{n}(...) (aggregate first for big "
       "data)" for g in _GROUPBYS for n in ("plot", "hist")},
    "DataFrameGroupBy.boxplot": "plotting draws on the client: df.to_pandas().groupby(...).boxplot(...)",
    "DataFrame.style": "pandas' Styler formats a table for display: df.head(n).to_pandas().style",
    **_each(_FRAMES, ("to_clipboard",), "the clipboard is the client's: {obj}.to_pandas().to_clipboard()"),
    **_each(_FRAMES, ("to_excel", "to_latex"), _CLIENT_WRITE),
    **_each(("DataFrame",), ("to_stata", "to_xml", "to_iceberg"), _CLIENT_WRITE),
    **_each(_FRAMES, ("to_pickle",), "pickles the whole object on the client: {obj}.to_pandas().to_pickle(path); "
            "to keep it partitioned, to_parquet with a '*' in the path"),
    **_each(_FRAMES, ("to_xarray",), "xarray holds its data in memory: {obj}.to_pandas().to_xarray(), or "
            "{obj}.to_tensor() for a lazy array"),
    **_each(_FRAMES, ("attrs", "flags"), _CLIENT_ONLY, _IN_MEMORY_META),
    **_each(_FRAMES, ("set_flags",), _CLIENT_ONLY + "(...)", _IN_MEMORY_META),
    **_each(_FRAMES, ("sparse",), "pandas' sparse arrays live in memory: {obj}.to_pandas().sparse; for sparse "
            "numbers in parallel, mars.tensor's sparse tensors"),
    "Series.array": "an in-memory ExtensionArray: s.to_pandas().array, or s.to_tensor() for a lazy array",
    "Index.array": "an in-memory ExtensionArray: idx.to_pandas().array, or idx.to_tensor() for a lazy array",
    "Index.view": "a view shares memory, and mars objects are values: idx.to_pandas().view(...)",
    "Index.is_": "identity of the data in memory: compare idx.equals(other), or idx.to_pandas().is_(...)",
}

#: names that fit a partitioned engine and are still to be written → what to do meanwhile (empty while none are)
NOT_YET: dict[str, str] = {}


class NotProvidedError(NotImplementedError):
    """A pandas name that mars.dataframe leaves out (or has not written yet), with what to use instead."""


def advice(qualified: str) -> str | None:
    """The message for ``"Owner.name"`` when it is listed, else None.

    >>> advice("Series.to_excel").split(":")[0]
    "mars.dataframe's Series does not provide to_excel"
    """
    owner, _, name = qualified.rpartition(".")
    shown = owner if owner[:1].isupper() else f"Series.{owner}"
    if qualified in LEFT_OUT:
        return f"mars.dataframe's {shown} does not provide {name}: {LEFT_OUT[qualified]}"
    if qualified in NOT_YET:
        return f"mars.dataframe's {shown} does not provide {name} yet; meanwhile use {NOT_YET[qualified]}"
    return None


class NotProvided:
    """A class attribute standing for a listed name: reading it on an object raises the advice."""

    def __init__(self, qualified: str):
        self.qualified = qualified
        self.__doc__ = advice(qualified)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self  # the class itself can still be inspected (help(), doctest collection)
        raise NotProvidedError(advice(self.qualified))

    def __repr__(self) -> str:
        return f"<not provided: {self.qualified}>"


def _samples() -> dict[str, Callable[[], Any]]:
    """Per owner, how to make a small mars object of its class (None when mars has no way to reach one)."""
    import mars.dataframe as md

    def frame() -> Any:
        return md.DataFrame({"a": [1, 2], "b": [1.0, 2.0]})

    def series() -> Any:
        return md.Series([1.0, 2.0])

    return {
        "DataFrame": frame,
        "Series": series,
        "Index": lambda: md.Index([1, 2]),
        "DataFrameGroupBy": lambda: frame().groupby("a"),
        "SeriesGroupBy": lambda: frame().groupby("a")["b"],
        "Rolling": lambda: series().rolling(2),
        "Expanding": lambda: series().expanding(),
        "ExponentialMovingWindow": lambda: series().ewm(com=0.5),
        "str": lambda: md.Series(["a", "b"]).str,
        "dt": lambda: md.Series(pd.date_range("2000-01-01", periods=2)).dt,
        "dt.timedelta": lambda: md.Series(pd.to_timedelta([1, 2], unit="D")).dt,
        "cat": lambda: md.Series(pd.Categorical(["a", "b"])).cat,
    }


def sample(owner: str) -> Any:
    """A small mars object of ``owner``'s class, or None where mars does not reach that class yet."""
    try:
        return _samples()[owner]()
    except (AttributeError, NotImplementedError):
        return None


def install() -> None:
    """Give each owner class a :class:`NotProvided` attribute per listed name it does not define."""
    for owner in _samples():
        obj = sample(owner)
        if obj is None:
            continue
        table_owner = owner.split(".")[0]
        for qualified in (*LEFT_OUT, *NOT_YET):
            o, _, name = qualified.rpartition(".")
            if o == table_owner and not _defines(type(obj), name):
                setattr(type(obj), name, NotProvided(qualified))


def _defines(cls: type, name: str) -> bool:
    return any(name in vars(k) for k in cls.__mro__ if k is not object)


def render() -> str:
    """The markdown list of ``docs/dataframe.md`` (between its not-provided markers).

    >>> render().splitlines()[0]
    'Left out on purpose (reading one raises `NotImplementedError` saying what to use instead):'
    """
    lines = ["Left out on purpose (reading one raises `NotImplementedError` saying what to use instead):", ""]
    lines += _grouped(LEFT_OUT)
    if NOT_YET:
        lines += ["", "Not written yet (they fit a partitioned engine; the same error says what to use meanwhile):",
                  ""]
        lines += _grouped(NOT_YET)
    return "\n".join(lines) + "\n"


def _grouped(table: dict[str, str]) -> list[str]:
    """One bullet per distinct advice, listing its names."""
    groups: dict[str, list[str]] = {}
    for name, text in table.items():
        groups.setdefault(text, []).append(name)
    return [f"- {' '.join(f'`{n}`' for n in names)}: {text}" for text, names in groups.items()]


if __name__ == "__main__":
    print(render(), end="")
