"""Chunk sizes: normalizing ``chunk_size=`` and aligning chunk grids."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..core.options import options


def _check_size(value: Any, where: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"chunk_size {where} must be a positive integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"chunk_size {where} must be positive, got {value!r}")
    return int(value)


def _split(length: int, size: int) -> tuple[int, ...]:
    if length == 0:
        return (0,)
    n, rest = divmod(length, size)
    return (size,) * n + ((rest,) if rest else ())


def _auto_sizes(shape: tuple[int, ...], itemsize: int) -> list[int]:
    """Chunk edge lengths so one chunk holds at most ``chunk_store_limit`` bytes."""
    limit = max(1, options.chunk_store_limit // max(itemsize, 1))
    if not shape:
        return []
    edge = max(1, int(limit ** (1 / len(shape))))
    sizes = [min(max(s, 1), edge) for s in shape]
    # give the room left by short dimensions to the long ones, last axis first
    for dim in reversed(range(len(shape))):
        others = math.prod(sizes[:dim] + sizes[dim + 1:]) or 1
        sizes[dim] = max(1, min(max(shape[dim], 1), limit // others))
    return sizes


def normalize_chunk_sizes(shape: Sequence[int], chunk_size: Any, itemsize: int = 8) -> tuple[tuple[int, ...], ...]:
    """``chunk_size`` (int, tuple of ints, tuple of per-dimension tuples, None) → nsplits.

    >>> normalize_chunk_sizes((5, 5), 3)
    ((3, 2), (3, 2))
    >>> normalize_chunk_sizes((5,), ((2, 3),))
    ((2, 3),)
    """
    shape = tuple(int(s) for s in shape)
    if chunk_size is None:
        chunk_size = options.chunk_size
    if chunk_size is None:
        return tuple(_split(s, c) for s, c in zip(shape, _auto_sizes(shape, itemsize)))
    if isinstance(chunk_size, dict):
        chunk_size = tuple(chunk_size.get(i, s) for i, s in enumerate(shape))
    if not isinstance(chunk_size, (tuple, list)):
        size = _check_size(chunk_size, "")
        return tuple(_split(s, size) for s in shape)
    if len(chunk_size) != len(shape):
        raise ValueError(f"chunk_size {tuple(chunk_size)!r} has {len(chunk_size)} dimensions, the shape {shape} has {len(shape)}")
    result = []
    for dim, (length, spec) in enumerate(zip(shape, chunk_size)):
        if spec is None or (isinstance(spec, (int, np.integer)) and not isinstance(spec, bool) and spec == -1):
            result.append((length,) if length else (0,))
        elif isinstance(spec, (tuple, list)):
            sizes = tuple(
                0 if isinstance(s, (int, np.integer)) and s == 0 and length == 0 else _check_size(s, f"on axis {dim}")
                for s in spec
            )
            if sum(sizes) != length:
                raise ValueError(f"chunk_size {tuple(spec)!r} on axis {dim} sums to {sum(sizes)}, the axis has length {length}")
            result.append(sizes)
        else:
            result.append(_split(length, _check_size(spec, f"on axis {dim}")))
    return tuple(result)


def broadcast_shape(*shapes: tuple) -> tuple:
    """numpy's broadcasting rule, with numpy's error message."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        text = " ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"operands could not be broadcast together with shapes {text}") from None


def common_splits(splits: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """The coarsest split that refines every split in ``splits`` (same total length)."""
    bounds: set[int] = set()
    for s in splits:
        bounds.update(np.cumsum(s).tolist())
    edges = sorted(bounds)
    out, prev = [], 0
    for e in edges:
        if e > prev:
            out.append(e - prev)
            prev = e
    return tuple(out) if out else (0,)


def offsets(sizes: Sequence[int]) -> list[int]:
    """Start offsets of chunks with these sizes."""
    result, acc = [], 0
    for s in sizes:
        result.append(acc)
        acc += s
    return result
