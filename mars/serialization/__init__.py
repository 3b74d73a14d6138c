"""Serialization for everything that crosses a process boundary.

Objects are pickled with protocol 5: contiguous buffers (numpy arrays, pandas
blocks, bytes-like objects) are handed back out-of-band instead of being copied
into the pickle stream, so a transport can write them to a socket as they are.
Datetime blocks and Arrow-backed columns (each chunk cut to its rows) go out
of band too, and come back as views of the buffers received (``buffers.py``).
Objects that plain pickle cannot handle (lambdas, local classes), and those
defined in ``__main__`` (which no other process can import), go by value
through cloudpickle. This package imports nothing else from ``mars``.
"""

from __future__ import annotations

from .core import (
    SerializationError,
    deserialize,
    deserialize_async,
    looks_heavy,
    serialize,
    serialize_async,
)

__all__ = [
    "SerializationError",
    "deserialize",
    "deserialize_async",
    "looks_heavy",
    "serialize",
    "serialize_async",
]
