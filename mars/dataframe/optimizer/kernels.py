"""The partition function of a fused region: a small program of steps.

A :class:`Program` runs the ops of a fused region on one partition, inputs
first. Most steps run their op's own chunk function on pandas objects
(:class:`OpStep`). Three kinds of step work on numpy arrays instead, so a
chain such as Q6's five comparisons ``&``-ed, the filter, a product of two
columns and its sum makes no intermediate Series:

- :class:`ColumnStep`: a column of a frame as its array (a view);
- :class:`BinaryStep`: an arithmetic, comparison or logical operator on
  arrays, with a scalar or another array of the same rows;
- :class:`FilterStep`: rows where a boolean array is true, kept as a lazy
  :class:`Masked` frame whose columns are compressed only when read.

An array value is a :class:`Vec`: its values and the :class:`Rows` they
stand for (a pandas object whose index they share, and the mask applied to
it). It becomes a Series only where a pandas step or the region's output
needs one. Each array step was checked, when the region was compiled, to
give pandas' dtype on the metadata; on data that does not match what it was
compiled for it runs its op on pandas objects instead, so it is never wrong,
only slower.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...core.tokenize import normalize


class Rows:
    """Which rows an array holds: ``base``'s rows where ``mask`` is true (all when None)."""

    __slots__ = ("_index", "base", "mask")

    def __init__(self, base: Any, mask: np.ndarray | None):
        self.base, self.mask, self._index = base, mask, None

    def index(self) -> pd.Index:
        if self._index is None:
            self._index = self.base.index if self.mask is None else self.base.index[self.mask]
        return self._index

    def same(self, other: Rows) -> bool:
        if self is other:
            return True
        if self.mask is not None or other.mask is not None:
            return False
        a, b = self.base.index, other.base.index
        return a is b or (len(a) == len(b) and a.equals(b))


class Vec:
    """Values of a Series not made yet: ``values`` for ``rows``, named ``name``."""

    __slots__ = ("name", "rows", "values")

    def __init__(self, values: np.ndarray, rows: Rows, name: Any):
        self.values, self.rows, self.name = values, rows, name

    def series(self) -> pd.Series:
        return pd.Series(self.values, index=self.rows.index(), name=self.name, copy=False)


class Masked:
    """``obj``'s rows where ``rows.mask`` is true, filtered only when needed whole."""

    __slots__ = ("obj", "rows")

    def __init__(self, obj: Any, rows: Rows):
        self.obj, self.rows = obj, rows

    def value(self) -> Any:
        return self.obj.loc[self.rows.mask]


def materialize(value: Any) -> Any:
    if isinstance(value, Vec):
        return value.series()
    if isinstance(value, Masked):
        return value.value()
    return value


class Ref:
    """Step input ``i`` of the program's inputs (``source="in"``) or of earlier steps (``"step"``)."""

    __slots__ = ("i", "source")

    def __init__(self, source: str, i: int):
        self.source, self.i = source, i

    def __reduce__(self) -> tuple:
        return Ref, (self.source, self.i)

    def __mars_tokenize__(self) -> str:
        return f"{self.source}{self.i}"

    def __repr__(self) -> str:
        return f"{self.source}{self.i}"


class Step:
    """One op of the region; ``op`` (bare) is what runs when the array path does not apply."""

    def __init__(self, op: Any, refs: Sequence[Ref]):
        self.op, self.refs = op, tuple(refs)

    def run(self, values: list) -> Any:
        return self.op.execute(*[materialize(v) for v in values])

    def __mars_tokenize__(self) -> tuple:
        return type(self).__name__, self.op, self.refs, self._extra()

    def _extra(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.op).__name__}, {list(self.refs)})"


class OpStep(Step):
    """The op's own chunk function on pandas values."""


class ColumnStep(Step):
    """``frame[label]`` as an array (when the column has ``dtype``)."""

    def __init__(self, op: Any, refs: Sequence[Ref], label: Any, dtype: np.dtype):
        super().__init__(op, refs)
        self.label, self.dtype = label, dtype

    def _extra(self) -> tuple:
        return (self.label, str(self.dtype))

    def run(self, values: list) -> Any:
        frame = values[0]
        if isinstance(frame, Masked):
            rows, obj = frame.rows, frame.obj
        else:
            rows, obj = Rows(frame, None), frame
        if not isinstance(obj, pd.DataFrame) or obj.columns.has_duplicates or self.label not in obj.columns:
            return super().run(values)
        column = obj[self.label]
        if column.dtype != self.dtype:
            return super().run(values)
        array = column.to_numpy()
        return Vec(array if rows.mask is None else array[rows.mask], rows, self.label)


class BinaryStep(Step):
    """``ufunc(left, right)``; ``literal`` (when ``literal_at`` is 0 or 1) stands in for that operand."""

    def __init__(self, op: Any, refs: Sequence[Ref], ufunc: np.ufunc, literal: Any, literal_at: int | None,
                 dtype: np.dtype, name: Any):
        super().__init__(op, refs)
        self.ufunc, self.literal, self.literal_at, self.dtype, self.name = ufunc, literal, literal_at, dtype, name

    def _extra(self) -> tuple:
        return (self.ufunc.__name__, normalize(self.literal), self.literal_at, str(self.dtype), normalize(self.name))

    def run(self, values: list) -> Any:
        vecs = [_as_vec(v) for v in values]
        if any(v is None for v in vecs) or (len(vecs) == 2 and not vecs[0].rows.same(vecs[1].rows)):
            return super().run(values)
        operands = [v.values for v in vecs]
        if self.literal_at is not None:
            operands.insert(self.literal_at, self.literal)
        with np.errstate(all="ignore"):
            out = self.ufunc(*operands)
        if out.dtype != self.dtype:
            return super().run(values)
        return Vec(out, vecs[0].rows, self.name)


def _as_vec(value: Any) -> Vec | None:
    if isinstance(value, Vec):
        return value
    if isinstance(value, Masked) and isinstance(value.obj, pd.Series):
        base = _as_vec(value.obj)
        if base is not None:
            return Vec(base.values[value.rows.mask], value.rows, value.obj.name)
        return None
    if isinstance(value, pd.Series) and isinstance(value.dtype, np.dtype) and value.dtype.kind in "biufM":
        return Vec(value.to_numpy(), Rows(value, None), value.name)
    return None


class FilterStep(Step):
    """``obj.loc[mask]`` kept lazy when the mask is an array of ``obj``'s own rows."""

    def run(self, values: list) -> Any:
        obj, mask = values
        if isinstance(mask, Vec) and mask.values.dtype == bool and mask.rows.mask is None \
                and mask.rows.base is obj:
            return Masked(obj, Rows(obj, mask.values))
        return super().run(values)


class Program:
    """Steps run in order on one partition's inputs; the last step's value is the output."""

    def __init__(self, steps: Sequence[Step], n_inputs: int):
        self.steps, self.n_inputs = tuple(steps), n_inputs

    def __call__(self, *inputs: Any) -> Any:
        results: list = []
        for step in self.steps:
            args = [inputs[r.i] if r.source == "in" else results[r.i] for r in step.refs]
            results.append(step.run(args))
        return materialize(results[-1])

    def __mars_tokenize__(self) -> tuple:
        return "fused-program", self.n_inputs, self.steps

    def __mars_kept_column__(self, args: tuple, kwargs: dict, column: Any) -> tuple[Any, Any] | None:
        """The argument and label the output's ``column`` takes its values from, traced back through the steps
        whose ops keep columns (``kept_column``: filters, selections, assignments); None when one may not."""
        at = len(self.steps) - 1
        while True:
            kept = getattr(self.steps[at].op, "kept_column", None)
            found = kept(column) if kept is not None else None
            if found is None:
                return None
            ref, column = self.steps[at].refs[found[0]], found[1]
            if ref.source == "in":
                return args[ref.i], column
            at = ref.i

    def __repr__(self) -> str:
        return "Fused[" + ", ".join(_short_name(s) for s in self.steps) + "]"

    __name__ = "fused"


def _short_name(step: Step) -> str:
    kind = {"ColumnStep": "col", "BinaryStep": "array", "FilterStep": "filter"}.get(type(step).__name__)
    func = getattr(step.op, "func", None)
    name = getattr(func, "__name__", None) or type(step.op).__name__
    if isinstance(step, BinaryStep):
        return f"{step.ufunc.__name__}"
    if isinstance(step, ColumnStep):
        return f"col[{step.label!r}]"
    return name if kind is None else f"{kind}"
