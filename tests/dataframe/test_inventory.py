"""Nothing of pandas' public API is silently missing from mars.dataframe: every public name of DataFrame,
Series, Index, the GroupBy objects, the windows and the .str/.dt/.cat accessors is provided, or listed in
mars.dataframe.inventory (and then raises NotImplementedError saying what to use); docs/dataframe.md lists
them as the tables do."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from pandas.core.groupby import DataFrameGroupBy, SeriesGroupBy
from pandas.core.indexes.accessors import DatetimeProperties, TimedeltaProperties
from pandas.core.window import Expanding, ExponentialMovingWindow, Rolling

import mars.dataframe as md
from mars.dataframe.inventory import (
    LEFT_OUT,
    NOT_YET,
    NotProvided,
    NotProvidedError,
    render,
    sample,
)

#: owner → pairs of a pandas class whose public names it must cover and the sample (see
#: ``inventory.sample``) of the mars class that provides them (``dt``: on datetimes and on timedeltas)
OWNERS: dict[str, list[tuple[type, str]]] = {
    "DataFrame": [(pd.DataFrame, "DataFrame")],
    "Series": [(pd.Series, "Series")],
    "Index": [(pd.Index, "Index")],
    "DataFrameGroupBy": [(DataFrameGroupBy, "DataFrameGroupBy")],
    "SeriesGroupBy": [(SeriesGroupBy, "SeriesGroupBy")],
    "Rolling": [(Rolling, "Rolling")],
    "Expanding": [(Expanding, "Expanding")],
    "ExponentialMovingWindow": [(ExponentialMovingWindow, "ExponentialMovingWindow")],
    "str": [(pd.core.strings.accessor.StringMethods, "str")],
    "dt": [(DatetimeProperties, "dt"), (TimedeltaProperties, "dt.timedelta")],
    "cat": [(pd.core.arrays.categorical.CategoricalAccessor, "cat")],
}
#: how mars reaches an owner's objects: when that name is listed, the owner's own names need not be
REACHED_BY = {"DataFrameGroupBy": "DataFrame.groupby", "SeriesGroupBy": "Series.groupby", "Rolling": "Series.rolling",
              "Expanding": "Series.expanding", "ExponentialMovingWindow": "Series.ewm", "str": "Series.str",
              "dt": "Series.dt", "cat": "Series.cat"}
DOCS = Path(__file__).resolve().parents[2] / "docs" / "dataframe.md"
BEGIN, END = "<!-- not-provided: begin (python -m mars.dataframe.inventory) -->", "<!-- not-provided: end -->"


def public_names(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def provides(obj: object, name: str) -> bool:
    """``obj`` has ``name``, statically or through its ``__getattr__``, and not as a listed name."""
    static = inspect.getattr_static(obj, name, None)
    if isinstance(static, NotProvided):
        return False
    if static is not None:
        return True
    try:
        getattr(obj, name)
    except (AttributeError, NotImplementedError):
        return False
    except Exception:  # noqa: BLE001 - the name exists; reading it on a tiny sample may fail for other reasons
        return True
    return True


def test_every_pandas_name_is_provided_or_listed():
    missing = set()
    for owner, pairs in OWNERS.items():
        for cls, sample_name in pairs:
            obj = sample(sample_name)
            if obj is None:
                assert REACHED_BY[owner] in LEFT_OUT | NOT_YET, f"mars cannot reach {owner} and does not list it"
                continue
            missing |= {f"{owner}.{name}" for name in public_names(cls)
                        if not provides(obj, name) and f"{owner}.{name}" not in LEFT_OUT | NOT_YET}
    missing = sorted(missing)
    assert not missing, f"pandas names neither provided by mars.dataframe nor listed in its inventory: {missing}"


@pytest.mark.parametrize("qualified", sorted(LEFT_OUT | NOT_YET))
def test_listed_name_raises_with_advice_and_is_not_provided(qualified):
    owner, _, name = qualified.rpartition(".")
    pairs = [(cls, s) for cls, s in OWNERS[owner] if name in public_names(cls)]
    assert pairs, f"pandas' {owner} has no {name}: drop it from the inventory"
    objs = [sample(s) for _, s in pairs]
    if any(o is None for o in objs):
        pytest.skip(f"mars does not reach {owner} yet ({REACHED_BY[owner]} is listed)")
    for obj in objs:
        static = inspect.getattr_static(obj, name, None)
        assert isinstance(static, NotProvided), f"{qualified} is provided now: remove it from the inventory's table"
        with pytest.raises(NotImplementedError, match=f"does not provide {name}") as info:
            getattr(obj, name)
        assert (LEFT_OUT | NOT_YET)[qualified] in str(info.value)


def test_tables_do_not_overlap_and_unknown_names_stay_attribute_errors():
    assert not set(LEFT_OUT) & set(NOT_YET)
    df = md.DataFrame({"a": [1]})
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        df.no_such_name  # noqa: B018
    assert hasattr(df, "a") and isinstance(md.DataFrame.plot, NotProvided)  # the class itself stays inspectable


def test_error_is_a_not_implemented_error_naming_the_way_through_pandas():
    s = md.Series([1.0, 2.0], chunk_size=1)
    with pytest.raises(NotProvidedError, match=r"does not provide plot: plotting draws on the client: "
                                               r"s\.to_pandas\(\)\.plot"):
        s.plot  # noqa: B018
    assert issubclass(NotProvidedError, NotImplementedError)


def test_docs_list_is_the_rendered_table():
    text = DOCS.read_text()
    assert BEGIN in text and END in text, f"{DOCS} lacks the not-provided markers"
    section = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert section.strip("\n") == render().strip("\n"), \
        "docs/dataframe.md is stale: paste `python -m mars.dataframe.inventory`"


def test_module_prints_the_rendered_table():
    out = subprocess.run([sys.executable, "-m", "mars.dataframe.inventory"], capture_output=True, text=True,
                         check=True, cwd=DOCS.parents[1])
    assert out.stdout == render()
