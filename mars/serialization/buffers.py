"""Reductions that keep column data out of the pickle stream, and out of extra copies.

Plain protocol-5 pickling already hands numeric numpy arrays out of band. Three
kinds of column data would still be copied:

- ``datetime64`` and ``timedelta64`` arrays: numpy pickles them in band (the
  blocks of datetime, tz-aware datetime and timedelta columns, and their indexes).
  Here their bytes go out of band as a buffer of int64, rebuilt with
  ``np.frombuffer`` over it. Strided arrays (a row slice of a 2-D block)
  numpy also copies into the stream: here they are copied out of band.
- Arrow-backed pandas arrays (``string[pyarrow]``, pandas 3's default ``str``,
  ``pd.ArrowDtype``): pandas' ``__getstate__`` combines the chunks into one new
  array first. Here the chunked array travels as it is, chunk by chunk.
- Sliced pyarrow arrays (a partition of a column, a chunk that Parquet reading
  cut): pyarrow pickles the whole buffers of the array they were cut from.
  Here each is cut to the bytes its rows use (see :mod:`.arrow`).

Each is rebuilt on the receiving side as a view of the buffers it is given
(shared memory, or a message's frames), without a copy. The reductions are
registered per pickler (:func:`dispatch_table`), never in :mod:`copyreg`, and
only once numpy, pyarrow or pandas has been imported by someone else: this
module imports none of them at its top.
"""

from __future__ import annotations

import copyreg
import pickle
import sys
from typing import Any

_table: dict[type, Any] = {}
_registered: set[str] = set()
#: how many entries of copyreg's table were copied into ``_table`` (see dispatch_table)
_copyreg_seen = 0


def dispatch_table() -> dict[type, Any]:
    """The reductions by exact type for the libraries imported so far (filled as they appear).

    Examples
    --------
    >>> import numpy as np
    >>> np.ndarray in dispatch_table()
    True
    """
    if len(_registered) < len(_REGISTER):
        for name, register in _REGISTER.items():
            if name not in _registered and name in sys.modules:
                try:
                    register(_table)
                except (KeyError, AttributeError):  # the library is half imported (another thread): next time
                    continue
                _registered.add(name)
    if len(copyreg.dispatch_table) != _copyreg_seen:
        _take_copyreg()
    return _table


def _take_copyreg() -> None:
    """A pickler with a table of its own never looks in copyreg's: what libraries registered there
    (numpy's ufuncs and dtype classes, ``re.Pattern``) would fail plain pickling and go the slow
    cloudpickle way (``np.add`` in an op made each message that carried it ~2x slower to pickle)."""
    global _copyreg_seen
    for cls, reduce in list(copyreg.dispatch_table.items()):
        _table.setdefault(cls, reduce)
    _copyreg_seen = len(copyreg.dispatch_table)


# -- numpy: datetime64 / timedelta64 and strided arrays out of band --------------
def _reduce_ndarray(a: Any) -> Any:
    kind = a.dtype.kind
    if kind not in "biufcmM" or not a.size:  # objects, strings, records: as numpy pickles them
        return a.__reduce_ex__(5)
    contiguous = a.flags.c_contiguous or a.flags.f_contiguous
    if contiguous and kind not in "mM":
        return a.__reduce_ex__(5)
    if not contiguous:  # numpy would copy it into the stream; a copy out of band is read without another
        a = a.copy(order="K")
    flat = a.view("i8") if kind in "mM" else a  # the buffer protocol has no datetime format
    return rebuild_ndarray, (pickle.PickleBuffer(flat), a.dtype, a.shape, "C" if a.flags.c_contiguous else "F")


def rebuild_ndarray(buffer: Any, dtype: Any, shape: Any, order: Any) -> Any:
    """An array of ``dtype`` and ``shape`` viewing ``buffer`` (its bytes in ``order``), without a copy.

    >>> import numpy as np
    >>> rebuild_ndarray(np.array([0, 1], "i8").tobytes(), np.dtype("M8[D]"), (2,), "C")
    array(['1970-01-01', '1970-01-02'], dtype='datetime64[D]')
    """
    import numpy as np

    return np.frombuffer(buffer, dtype=dtype).reshape(shape, order=order)


def _register_numpy(table: dict[type, Any]) -> None:
    table[sys.modules["numpy"].ndarray] = _reduce_ndarray


# -- pyarrow: arrays cut to their rows (see .arrow) ------------------------------
def _register_pyarrow(table: dict[type, Any]) -> None:
    pa = sys.modules["pyarrow"]
    from . import arrow  # imports pyarrow: only now that someone has

    table[pa.ChunkedArray] = arrow.reduce_chunked
    pending = [pa.Array]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if not issubclass(cls, pa.ExtensionArray):  # their own classes, reduced as they choose
            table[cls] = arrow.reduce_array


# -- pandas: Arrow-backed arrays keep their chunks -------------------------------
def _reduce_arrow_extension(ea: Any) -> Any:
    state = ea.__dict__.copy()
    if "_cache" in state:  # cached properties are recomputed
        state["_cache"] = {}
    return rebuild_arrow_extension, (type(ea), state)


def rebuild_arrow_extension(cls: Any, state: dict[str, Any]) -> Any:
    """An Arrow-backed pandas array of class ``cls`` from its attributes, through pandas' ``__setstate__``.

    >>> import pandas as pd
    >>> a = pd.array(["x", None], dtype="string[pyarrow]")
    >>> rebuild_arrow_extension(type(a), dict(a.__dict__)).equals(a)
    True
    """
    obj = cls.__new__(cls)
    obj.__setstate__(state)
    return obj


def _register_pandas(table: dict[type, Any]) -> None:
    # the module as it is (an import here could wait on another thread that is importing pandas)
    ArrowExtensionArray = sys.modules["pandas.arrays"].ArrowExtensionArray

    if not hasattr(ArrowExtensionArray, "__getstate__"):  # pandas pickles the chunks itself
        return
    pending = [ArrowExtensionArray]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if "__reduce__" not in cls.__dict__ and "__reduce_ex__" not in cls.__dict__:
            table[cls] = _reduce_arrow_extension


_REGISTER = {"numpy": _register_numpy, "pyarrow": _register_pyarrow, "pandas": _register_pandas}
