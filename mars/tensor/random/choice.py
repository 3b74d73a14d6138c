"""``choice``: samples from a population, with or without replacement.

With replacement each output chunk samples on its own (the population and
``p`` travel whole to every chunk). Without replacement and without ``p``,
the sample is a random permutation's first elements: the population is
shuffled (see :mod:`.permutation`) into the output chunks plus one partition
of left-over elements that is never read. Without replacement, with ``p`` or
from ``range(n)`` with a sample that fits in one chunk, one chunk draws the
whole sample, as numpy does.
"""

from __future__ import annotations

import math
from typing import Any, Generator

import numpy as np

from ...core.entity import chunk_indexes, has_unknown
from ...core.operator import Tiled
from ...core.options import options
from ...core.tiling import recursive_tile
from ..chunks import normalize_chunk_sizes
from ..core import Tensor, TensorData, TensorOperator, is_tensor, tensor_data
from ..datasource.core import astensor
from ..datasource.creation import arange
from ..rechunk import rechunk
from .core import chunk_rng, normalize_size
from .permutation import ensure_known, permute_rows


class TensorChoice(TensorOperator):
    """Each chunk draws ``Generator.choice`` from the whole population (``inputs[0]`` or
    ``range(n)``) with the whole ``p`` (last input, when ``has_p``)."""

    params = ("seed", "stream", "n", "replace", "has_p", "size", "nsplits")
    fusible = True

    @classmethod
    def tile(cls, op: TensorChoice) -> Generator[Any, Any, Tiled]:
        out = op.outputs[0]
        wholes = []
        for inp in op.inputs:
            whole = yield from recursive_tile(rechunk(inp, (-1,)))
            wholes.append(tensor_data(whole).chunks[0])
        chunks = []
        for stream, index in enumerate(chunk_indexes([len(s) for s in op.nsplits])):
            shape = tuple(op.nsplits[d][i] for d, i in enumerate(index))
            chunk_op = op.copy(stream=stream, size=shape, nsplits=None)
            chunks.append(chunk_op.new_chunk(wholes, index=index, shape=shape, dtype=out.dtype, order="C"))
        return Tiled(chunks, op.nsplits)

    def execute(self, *inputs: np.ndarray) -> np.ndarray:
        population = inputs[0] if self.n is None else self.n
        p = inputs[-1] if self.has_p else None
        return chunk_rng(self.seed, self.stream).choice(population, size=self.size, replace=self.replace, p=p)


class TensorChoiceShuffle(TensorOperator):
    """A sample without replacement: the population shuffled into the output chunks."""

    params = ("seed", "size", "nsplits")

    @classmethod
    def tile(cls, op: TensorChoiceShuffle) -> Generator[Any, Any, Tiled]:
        pop, out = op.inputs[0], op.outputs[0]
        yield from ensure_known(pop)
        n, k = int(pop.shape[0]), math.prod(op.size)
        if k > n:
            raise ValueError(f"Cannot take a larger sample than population when 'replace=False' ({k} > {n})")
        indexes = list(chunk_indexes([len(s) for s in op.nsplits]))
        shapes = [tuple(op.nsplits[d][i] for d, i in enumerate(index)) for index in indexes]
        # the elements left over go to one more partition, which nothing reads
        targets = [math.prod(s) for s in shapes] + [n - k]

        def meta(r: int, rest: tuple) -> dict:
            index, shape = (indexes[r], shapes[r]) if r < len(shapes) else ((len(shapes),), (n - k,))
            return {"index": index, "shape": shape, "dtype": out.dtype, "order": "C"}

        chunks = permute_rows(pop, op.seed, targets, meta)[0][: len(shapes)]
        return Tiled(chunks, op.nsplits)


def _population(a: Any, k: int) -> tuple[TensorData | None, float]:
    """(population tensor or None for ``range(n)``, population size)."""
    if is_tensor(a):
        data = tensor_data(a)
        if data.ndim != 1:
            raise ValueError(f"a must be 1-dimensional, got shape {data.shape}")
        return data, data.shape[0]
    array = np.asarray(a)
    if array.ndim == 0:
        try:
            n = int(array.item().__index__())
        except (AttributeError, TypeError):
            raise ValueError(f"a must be 1-dimensional or an integer, got {a!r}") from None
        if n <= 0 and k:
            raise ValueError(f"a must be greater than 0 unless no samples are taken, got {n}")
        return None, n
    if array.ndim != 1:
        raise ValueError(f"a must be 1-dimensional, got shape {array.shape}")
    if array.size == 0 and k:
        raise ValueError("'a' cannot be empty unless no samples are taken")
    return tensor_data(astensor(array)), array.size


def _check_p(p: Any, n: float, k: int, replace: bool) -> TensorData | None:
    if p is None or is_tensor(p):
        return None if p is None else tensor_data(p)
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"'p' must be 1-dimensional, got shape {p.shape}")
    if p.size != n:
        raise ValueError(f"'a' and 'p' must have same size, got {n} and {p.size}")
    if np.isnan(p).any():
        raise ValueError("probabilities contain NaN")
    if (p < 0).any():
        raise ValueError("probabilities are not non-negative")
    if abs(p.sum() - 1) > np.sqrt(np.finfo(np.float64).eps):
        raise ValueError(f"probabilities do not sum to 1, they sum to {p.sum()}")
    if not replace and np.count_nonzero(p > 0) < k:
        raise ValueError(f"Fewer non-zero entries in p than size ({np.count_nonzero(p > 0)} < {k})")
    return tensor_data(astensor(p))


def choice(seed: int, a: Any, size: Any = None, replace: bool = True, p: Any = None, chunk_size: Any = None) -> Tensor:
    """A random sample from ``a`` (or ``range(a)``); see ``RandomState.choice``."""
    shape = normalize_size(size) or ()
    k = math.prod(shape)
    pop, n = _population(a, k)
    p_data = _check_p(p, n, k, replace)
    if not replace and not has_unknown((n,)) and k > n:
        raise ValueError(f"Cannot take a larger sample than population when 'replace=False' ({k} > {n})")
    dtype = pop.dtype if pop is not None else np.dtype(np.int64)
    # numpy draws a small sample of range(n) without touching all n: so does one chunk
    one_draw = pop is None and k * dtype.itemsize <= options.chunk_store_limit
    if not replace and p_data is None and not one_draw:
        nsplits = normalize_chunk_sizes(shape, chunk_size, dtype.itemsize)
        population = pop if pop is not None else tensor_data(arange(int(n)))
        return TensorChoiceShuffle(seed=seed, size=shape, nsplits=nsplits).new_tensor([population], shape, dtype)
    # without replacement the whole sample comes from one draw, cut up afterwards
    nsplits = normalize_chunk_sizes(shape, chunk_size if replace else (-1,) * len(shape), dtype.itemsize)
    inputs = [x for x in (pop, p_data) if x is not None]
    op = TensorChoice(seed=seed, stream=None, n=None if pop is not None else int(n), replace=bool(replace),
                      has_p=p_data is not None, size=shape, nsplits=nsplits)
    t = op.new_tensor(inputs, shape, dtype)
    return t if replace or chunk_size is None else rechunk(t, chunk_size)
