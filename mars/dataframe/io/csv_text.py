"""A partition's CSV text made with pyarrow, equal byte for byte to ``pandas.DataFrame.to_csv``.

pandas formats floats with numpy and writes rows with Python's ``csv``
module, both holding the GIL: two partitions written on two threads mostly
wait for each other. Here each column becomes the strings pandas would
write, with pyarrow's kernels (which release the GIL) where their text is
pandas', then the rows are joined by pyarrow and the buffer written as is:

- float64 and float32: pyarrow's shortest digits (those of numpy's ``str``,
  which pandas uses) for zero and ``1e-4 <= |x| < 1e10`` (float32: ``1e6``),
  where pyarrow writes no exponent (``.0`` added to whole numbers); numpy's
  ``str`` for the rest;
- integers, bools (``True``/``False``), strings, naive datetimes (whole
  seconds: pandas' ``%Y-%m-%d %H:%M:%S``, or the date alone when every time
  is midnight), nullable integers and booleans;
- any other column (float16, categoricals, timedeltas, ...): pandas' own
  formatting of that column.

Strings are quoted as ``csv.QUOTE_MINIMAL`` quotes them (the characters that
make Python quote a field are found by asking pandas, once per dialect).
Anything this does not cover (``float_format``, ``decimal``, other
quoting, compression, other encodings, URLs, a Series, one field per row, a
MultiIndex, ...) is left to pandas: :func:`partition_csv` returns ``None``.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .fs import is_url

__all__ = ["partition_csv"]

_NULLABLE_INTS = {f"{u}Int{b}" for u in ("", "U") for b in (8, 16, 32, 64)}

# keywords whose non-default values leave the partition to pandas
_DEFAULTS = {"float_format": None, "columns": None, "quoting": None, "quotechar": '"', "escapechar": None,
             "doublequote": True, "date_format": None, "decimal": ".", "compression": "infer", "errors": "strict",
             "storage_options": None}
# keywords that only change the header (made by pandas) or nothing here
_HEADER_ONLY = {"header", "index_label", "chunksize", "mode", "index", "sep", "na_rep", "lineterminator",
                "encoding"}


def _supported(part: Any, path: Any, kwargs: dict) -> bool:
    if not isinstance(part, pd.DataFrame) or isinstance(part.columns, pd.MultiIndex):
        return False
    if any(k not in _DEFAULTS and k not in _HEADER_ONLY for k in kwargs):
        return False
    if any(kwargs.get(k, v) != v for k, v in _DEFAULTS.items() if k != "quoting"):
        return False
    if kwargs.get("quoting") not in (None, 0):  # csv.QUOTE_MINIMAL
        return False
    if (kwargs.get("encoding") or "utf-8").lower().replace("_", "-") not in ("utf-8", "utf8"):
        return False
    if path is not None and (not isinstance(path, str) or is_url(path) or os.path.splitext(path)[1].lower() in
                             (".gz", ".bz2", ".zip", ".xz", ".zst", ".tar", ".tgz")):
        return False
    index = kwargs.get("index", True)
    if index and isinstance(part.index, pd.MultiIndex):
        return False
    sep, term = kwargs.get("sep", ","), kwargs.get("lineterminator") or os.linesep
    if len(sep) != 1 or not isinstance(kwargs.get("na_rep", ""), str):
        return False
    return part.shape[1] + bool(index) > 1 and len(part) > 0 and bool(term)


@functools.lru_cache(maxsize=16)
def _quoted_chars(sep: str, term: str) -> str:
    """The characters that make pandas (Python's ``csv``) quote a field, for this dialect."""
    candidates = "".join(dict.fromkeys(sep + '"\n\r' + term))
    probe = pd.DataFrame({"a": [f"x{c}y" for c in candidates], "b": 0})
    lines = probe.to_csv(None, index=False, header=False, sep=sep, lineterminator=term)
    return "".join(c for c in candidates if f'"x{c}' in lines)


def _quote(text: pa.Array, chars: str) -> pa.Array:
    """``text`` with the fields that hold one of ``chars`` quoted (inner quotes doubled)."""
    pattern = "[" + "".join("\\" + c if c in "\\]^-[" else c for c in chars) + "]"
    needs = pc.match_substring_regex(text, pattern)
    if not pc.any(needs).as_py():
        return text
    doubled = pc.replace_substring(text, '"', '""')
    return pc.if_else(needs, pc.binary_join_element_wise('"', doubled, '"', ""), text)


def _floats(values: np.ndarray, na_rep: str, high: float) -> pa.Array:
    arr = pa.array(values)
    text = arr.cast(pa.string())
    whole = pc.invert(pc.match_substring(text, "."))
    text = pc.if_else(whole, pc.binary_join_element_wise(text, ".0", ""), text)
    size = np.abs(values)
    with np.errstate(invalid="ignore"):
        other = ~(((size >= 1e-4) & (size < high)) | (values == 0))
    if other.any():  # numpy's digits and exponents, NaN as na_rep
        rest = values[other]
        repl = np.where(np.isnan(rest), na_rep, rest.astype(str)).astype(object)
        text = pc.replace_with_mask(text, pa.array(other), pa.array(repl, pa.string()))
    return text


def _datetimes(values: np.ndarray, na_rep: str) -> pa.Array | None:
    seconds = values.astype("datetime64[s]")
    nat = np.isnat(values)
    if not (seconds == values)[~nat].all():  # fractions of a second: pandas picks a precision
        return None
    arr = pa.array(seconds, mask=nat)
    days = seconds.astype("datetime64[D]")
    if (days == seconds)[~nat].all():  # every time midnight: pandas writes the dates alone
        arr = arr.cast(pa.date32())
    return pc.fill_null(arr.cast(pa.string()), na_rep)


def _column(values: pd.Series | pd.Index, na_rep: str) -> pa.Array | None:
    """The strings pandas writes for ``values`` (a column or index), or ``None`` where not known here."""
    dtype = values.dtype
    if isinstance(dtype, np.dtype):
        arr = values.to_numpy()
        if dtype.kind == "f" and dtype.itemsize in (4, 8):  # where pyarrow starts writing exponents
            return _floats(arr, na_rep, 1e10 if dtype.itemsize == 8 else 1e6)
        if dtype.kind in "iu":
            return pa.array(arr).cast(pa.string())
        if dtype.kind == "b":
            return pc.if_else(pa.array(arr), "True", "False")
        if dtype.kind == "M" and dtype.str.endswith(("[s]", "[ms]", "[us]", "[ns]")):
            return _datetimes(arr, na_rep)
        if dtype.kind == "O" and pd.api.types.infer_dtype(arr, skipna=True) in ("string", "empty"):
            return pc.fill_null(pa.array(arr, pa.string(), from_pandas=True), na_rep)
        return None
    if isinstance(dtype, pd.StringDtype) or str(dtype) in _NULLABLE_INTS:
        arr = pa.array(values, from_pandas=True)
        return pc.fill_null(arr.cast(pa.string()), na_rep)
    if isinstance(dtype, pd.BooleanDtype):
        return pc.fill_null(pc.if_else(pa.array(values, from_pandas=True), "True", "False"), na_rep)
    return None


def _by_pandas(column: pd.Series, kwargs: dict) -> pa.Array:
    """pandas' own text of one column (before quoting)."""
    frame = column.to_frame()
    text = frame._get_values_for_csv(float_format=None, date_format=None, decimal=".",
                                     na_rep=kwargs.get("na_rep", ""), quoting=None)
    values = np.asarray(text.iloc[:, 0], dtype=object)
    return pa.array([v if isinstance(v, str) else str(v) for v in values], pa.string())


def _fields(part: pd.DataFrame, kwargs: dict) -> list[pa.Array]:
    na_rep = kwargs.get("na_rep", "")
    columns = [part.index] if kwargs.get("index", True) else []
    columns += [part.iloc[:, j] for j in range(part.shape[1])]
    out = []
    for values in columns:
        text = _column(values, na_rep)
        if text is None:
            text = _by_pandas(pd.Series(values, copy=False) if isinstance(values, pd.Index) else values, kwargs)
        out.append(text)
    return out


def partition_csv(part: Any, path: Any, kwargs: dict) -> Any:
    """Write ``part`` as ``part.to_csv(path, **kwargs)`` would (the text when ``path`` is None).

    Returns ``None`` without writing when this case is left to pandas.

    Examples
    --------
    >>> import pandas as pd
    >>> partition_csv(pd.DataFrame({"a": [1.5, 2.0], "b": ["x,y", "z"]}), None, {"index": False})
    'a,b\\n1.5,"x,y"\\n2.0,z\\n'
    """
    if not _supported(part, path, kwargs):
        return None
    sep, term = kwargs.get("sep", ","), kwargs.get("lineterminator") or os.linesep
    try:
        header_kwargs = {k: v for k, v in kwargs.items() if k != "mode"}
        header = part.iloc[:0].to_csv(None, **header_kwargs)
        chars = _quoted_chars(sep, term)
        fields = [_quote(f, chars) for f in _fields(part, kwargs)]
        args: list[Any] = []
        for f in fields:
            args += [f, sep]
        args[-1] = term
        lines = pc.binary_join_element_wise(*args, "")
    except pa.ArrowException:  # e.g. text over 2 GiB in one array: pandas writes it
        return None
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=len(lines) + 1, offset=lines.offset * 4)
    body = memoryview(lines.buffers()[2])[offsets[0]:offsets[-1]]
    if path is None:
        return header + bytes(body).decode()
    mode = kwargs.get("mode", "w").replace("t", "").replace("b", "") + "b"
    with open(path, mode) as f:
        f.write(header.encode())
        f.write(body)
    return ""
