"""Pickle protocol 5 with out-of-band buffers, and a cloudpickle fallback.

Plain pickle writes a function or class by reference (module and name), which
another process can only resolve if it can import that module. Objects defined
in ``__main__`` (a script, a REPL, a notebook cell) cannot be: the receiving
process's ``__main__`` is some other program (``mars-supervisor``). So a stream
that names ``__main__`` is made again with cloudpickle, which writes such
objects by value. Finding the name is one substring search over the in-band
header (arrays travel out-of-band), so the common path stays plain pickle.
"""

from __future__ import annotations

import asyncio
import io
import pickle
from typing import Any

from .buffers import dispatch_table

# An in-band pickle stream larger than this is decoded in a worker thread so the
# event loop keeps serving other messages meanwhile.
HEAVY_HEADER_BYTES = 1 << 20
# Containers with more items than this are pickled in a worker thread.
HEAVY_CONTAINER_ITEMS = 20_000

_SCALARS = frozenset([bool, int, float, complex, str, bytes])
_PICKLE_FAILURES = (pickle.PicklingError, AttributeError, TypeError)
#: how the module name of a global from ``__main__`` appears in a pickle stream
_MAIN_MODULE = b"__main__"


class SerializationError(Exception):
    """An object could not be turned into bytes, or bytes back into an object."""


def serialize(obj: Any) -> tuple[bytes, list[memoryview]]:
    """Pickle ``obj`` into an in-band header and a list of out-of-band buffers.

    Examples
    --------
    >>> import numpy as np
    >>> header, buffers = serialize({"x": np.arange(4)})
    >>> [b.nbytes for b in buffers]
    [32]
    >>> deserialize(header, buffers)["x"].tolist()
    [0, 1, 2, 3]
    """
    buffers: list[pickle.PickleBuffer] = []
    try:
        header = _dumps(obj, buffers.append)
    except _PICKLE_FAILURES as plain_error:
        buffers = []
        header = _cloudpickle_dumps(obj, buffers, plain_error)
    except Exception as e:  # an object's own __reduce__ or __getstate__ failed
        raise SerializationError(f"cannot serialize object of type {type(obj).__qualname__}: {e!r}") from e
    if _MAIN_MODULE in header:  # names something of __main__ (or a string that says so: harmless)
        buffers = []
        header = _cloudpickle_dumps(obj, buffers, None)
    try:
        return header, [b.raw() for b in buffers]
    except BufferError as e:  # pragma: no cover - pickle only emits contiguous buffers
        raise SerializationError(f"cannot serialize {type(obj).__name__}: {e}") from e


class _Pickler(pickle.Pickler):
    # read once, when a pickler is made; the table itself fills as numpy, pyarrow and pandas are imported
    dispatch_table = dispatch_table()


def _dumps(obj: Any, buffer_callback: Any) -> bytes:
    if type(obj) in _SCALARS:  # most small messages: nothing to reduce
        return pickle.dumps(obj, protocol=5)
    dispatch_table()
    out = io.BytesIO()
    _Pickler(out, protocol=5, buffer_callback=buffer_callback).dump(obj)
    return out.getvalue()


_cloudpickler: type | None = None


def _cloudpickle_dumps(obj: Any, buffers: list, plain_error: Exception | None) -> bytes:
    global _cloudpickler
    import collections

    import cloudpickle

    if _cloudpickler is None:
        _cloudpickler = type("_CloudPickler", (cloudpickle.Pickler,), {
            "dispatch_table": collections.ChainMap(dispatch_table(), cloudpickle.Pickler.dispatch_table)})
    try:
        out = io.BytesIO()
        _cloudpickler(out, protocol=5, buffer_callback=buffers.append).dump(obj)
        return out.getvalue()
    except Exception as e:
        said = f" (plain pickle said: {plain_error})" if plain_error is not None else ""
        raise SerializationError(f"cannot serialize object of type {type(obj).__qualname__}: {e}{said}") from e


def deserialize(header: bytes | bytearray | memoryview, buffers: list | tuple = ()) -> Any:
    """Rebuild the object that :func:`serialize` produced."""
    try:
        return pickle.loads(header, buffers=buffers)
    except Exception as e:
        raise SerializationError(f"cannot deserialize message: {type(e).__name__}: {e}") from e


def looks_heavy(obj: Any, depth: int = 3) -> bool:
    """Guess, without pickling, whether pickling ``obj`` costs enough to leave the loop.

    Out-of-band buffers cost nothing to pickle, so only large Python-level
    containers and object-dtype arrays count as heavy.
    """
    if obj is None or type(obj) in _SCALARS:
        return False
    if isinstance(obj, (list, tuple, dict, set, frozenset)):
        if len(obj) > HEAVY_CONTAINER_ITEMS:
            return True
        if depth <= 0:
            return False
        items = obj.values() if isinstance(obj, dict) else obj
        return any(looks_heavy(item, depth - 1) for item in items)
    dtype = getattr(obj, "dtype", None)
    if dtype is not None and getattr(dtype, "kind", None) == "O":
        return getattr(obj, "size", 0) > HEAVY_CONTAINER_ITEMS
    dtypes = getattr(obj, "dtypes", None)
    if dtypes is not None and hasattr(obj, "shape"):
        try:
            has_objects = any(getattr(d, "kind", None) == "O" for d in dtypes)
        except TypeError:
            return False
        return has_objects and obj.shape[0] > HEAVY_CONTAINER_ITEMS // 10
    return False


async def serialize_async(obj: Any) -> tuple[bytes, list[memoryview]]:
    """:func:`serialize`, in a worker thread when ``obj`` looks heavy."""
    if looks_heavy(obj):
        return await asyncio.get_running_loop().run_in_executor(None, serialize, obj)
    return serialize(obj)


async def deserialize_async(header: bytes | bytearray, buffers: list | tuple = ()) -> Any:
    """:func:`deserialize`, in a worker thread when the in-band part is large."""
    if len(header) > HEAVY_HEADER_BYTES:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, deserialize, header, buffers)
    return deserialize(header, buffers)
