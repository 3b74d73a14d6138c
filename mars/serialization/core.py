"""Pickle protocol 5 with out-of-band buffers, and a cloudpickle fallback."""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

# An in-band pickle stream larger than this is decoded in a worker thread so the
# event loop keeps serving other messages meanwhile.
HEAVY_HEADER_BYTES = 1 << 20
# Containers with more items than this are pickled in a worker thread.
HEAVY_CONTAINER_ITEMS = 20_000

_SCALARS = frozenset([bool, int, float, complex, str, bytes])
_PICKLE_FAILURES = (pickle.PicklingError, AttributeError, TypeError)


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
        header = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    except _PICKLE_FAILURES as plain_error:
        buffers = []
        header = _cloudpickle_dumps(obj, buffers, plain_error)
    except Exception as e:  # an object's own __reduce__ or __getstate__ failed
        raise SerializationError(f"cannot serialize object of type {type(obj).__qualname__}: {e!r}") from e
    try:
        return header, [b.raw() for b in buffers]
    except BufferError as e:  # pragma: no cover - pickle only emits contiguous buffers
        raise SerializationError(f"cannot serialize {type(obj).__name__}: {e}") from e


def _cloudpickle_dumps(obj: Any, buffers: list, plain_error: Exception) -> bytes:
    import cloudpickle

    try:
        return cloudpickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    except Exception as e:
        raise SerializationError(
            f"cannot serialize object of type {type(obj).__qualname__}: {e} "
            f"(plain pickle said: {plain_error})"
        ) from e


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
