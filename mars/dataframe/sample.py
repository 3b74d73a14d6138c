"""``sample``: random rows across partitions.

Each partition's share of the rows is drawn first, exactly as a uniform
sample over all rows would split (multivariate hypergeometric without
replacement, multinomial with), then each partition samples its share. The
same ``random_state`` gives the same rows; they are not pandas' rows.
"""

from __future__ import annotations

from typing import Any, Generator

import numpy as np

from ..core.operator import Tiled
from ..core.tiling import as_data
from .core import DataFrame, PandasOperator, Series, chunk_index_of, chunk_shape_of, nsplits_of
from .basic import reset_index
from .rows import known_rows

__all__: list[str] = []


class SamplePartitions(PandasOperator):
    """A uniform sample: how many rows each partition gives is drawn first, then each samples its own."""

    params = ("n", "frac", "replace", "seed")

    @classmethod
    def tile(cls, op: SamplePartitions) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        rows = np.asarray((yield from known_rows(data)), dtype=np.int64)
        total = int(rows.sum())
        n = op.n if op.n is not None else int(round(op.frac * total))
        if n > total and not op.replace:
            raise ValueError("Cannot take a larger sample than population when 'replace=False'")
        counts = sample_counts(np.random.default_rng(op.seed), rows, n, op.replace)
        chunks = [SampleChunk(n=int(k), replace=op.replace, seed=(op.seed, i)).new_chunk(
            [c], index=chunk_index_of(out.meta, i), shape=chunk_shape_of(out.meta, int(k)), meta=out.meta)
            for i, (c, k) in enumerate(zip(data.chunks, counts))]
        return Tiled(chunks, nsplits_of(out.meta, [int(k) for k in counts]))


def sample_counts(rng: np.random.Generator, rows: np.ndarray, n: int, replace: bool) -> np.ndarray:
    """How many of ``n`` sampled rows fall in each partition, with the law of a uniform sample."""
    total = int(rows.sum())
    if n == 0 or total == 0:
        if n and total == 0:
            raise ValueError("a must be greater than 0 unless no samples are taken")
        return np.zeros(len(rows), dtype=np.int64)
    if replace:
        return rng.multinomial(n, rows / total)
    return rng.multivariate_hypergeometric(rows, n)


class SampleChunk(PandasOperator):
    params = ("n", "replace", "seed")
    fusible = True

    def execute(self, value: Any) -> Any:
        rs = np.random.RandomState(np.random.SeedSequence(list(self.seed)).generate_state(1)[0])
        return value.sample(n=self.n, replace=self.replace, random_state=rs)


def _seed(random_state: Any) -> int:
    if random_state is None:
        return int(np.random.SeedSequence().entropy % (1 << 63))
    if isinstance(random_state, (int, np.integer)):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2 ** 31 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 1 << 63))
    raise ValueError("random_state must be an integer, array-like, a BitGenerator, Generator, a numpy RandomState, "
                     "or None")


def _sample(self: Any, n: Any = None, frac: Any = None, replace: bool = False, weights: Any = None,
            random_state: Any = None, axis: Any = None, ignore_index: bool = False) -> Any:
    """A random sample of rows; the same ``random_state`` gives the same sample.

    Rows come in partition order (each partition's own rows shuffled), and
    each partition gives a share of ``n`` drawn as a uniform sample would.

    >>> import mars.dataframe as md
    >>> len(md.DataFrame({"a": range(10)}, chunk_size=3).sample(4, random_state=0).to_pandas())
    4
    """
    if weights is not None or axis in (1, "columns"):
        raise NotImplementedError("sample with weights or axis=1")
    if n is not None and frac is not None:
        raise ValueError("Please enter a value for `frac` OR `n`, not both")
    if n is None and frac is None:
        n = 1
    if n is not None and (not isinstance(n, (int, np.integer)) or n < 0):
        raise ValueError("A negative number of rows requested. Please provide `n` >= 0." if isinstance(n, (int, np.integer))
                         else "Only integers accepted as `n` values")
    if frac is not None and frac > 1 and not replace:
        raise ValueError("Replace has to be set to `True` when upsampling the population `frac` > 1.")
    if frac is not None and frac < 0:
        raise ValueError("A negative number of rows requested. Please provide `frac` >= 0.")
    data = as_data(self)
    size = float(n) if n is not None else (np.nan if np.isnan(data.shape[0]) else float(round(frac * data.shape[0])))
    if n is not None and not replace and not np.isnan(data.shape[0]) and n > data.shape[0]:
        raise ValueError("Cannot take a larger sample than population when 'replace=False'")
    op = SamplePartitions(n=None if n is None else int(n), frac=frac, replace=replace, seed=_seed(random_state))
    result = op.new_pandas([data], data.meta, (size,) + tuple(data.shape[1:]))
    return reset_index(result, drop=True) if ignore_index else result


for _cls in (DataFrame, Series):
    _cls.sample = _sample
