"""``einsum``: Einstein summation as a chain of pairwise contractions over chunks.

Each operand is first brought to distinct labels on its own: a dimension of
size 1 that another operand has longer is dropped (it broadcasts), a
repeated label takes the diagonal, and a label no other operand nor the
output has is summed away. The operands are then contracted two at a time in
the order ``np.einsum_path`` gives (its greedy order when ``optimize`` is
False: the order changes only the rounding, and a chunked contraction is
pairwise anyway). A pair with no label kept on both sides is a ``tensordot``;
a pair sharing kept ("batch") labels, such as ``bij,bjk->bik``, is one block
op per output chunk that aligns each pair of input blocks into a batched
matrix product (``np.matmul``) and adds the products over the summed labels'
blocks. Nothing is gathered into one chunk.

Subscripts are checked by numpy itself, on stand-ins of size 1 (so its
error texts are the ones users see); label sizes are checked here, and a
mismatch is reported through numpy on zero-stride stand-ins of the real
shapes, which raises before computing anything.
"""

from __future__ import annotations

import itertools
import math
import string
from typing import Any, Generator, Sequence

import numpy as np

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ..chunks import common_splits
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor
from ..linalg.products import _BlockProduct, _sum_of_pairs, tensordot
from ..reduction.basic import sum as tensor_sum
from .reshape import known_sizes, rechunked
from .transpose import transpose

__all__ = ["einsum", "einsum_path"]

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # numpy's order for integer labels 0..51
Labels = tuple[str, ...]


# ----------------------------------------------------------------- chunk ops
class EinsumPairBlock(_BlockProduct):
    """Σ over pairs of blocks of ``a`` and ``b`` contracted as one batched matrix product.

    ``a_perm`` orders ``a``'s dims as (batch, a's own, summed) and ``b_perm``
    orders ``b``'s as (batch, summed, b's own); the block is
    (batch, a's own, b's own).
    """

    params = ("a_perm", "b_perm", "n_batch", "n_summed", "dtype")

    def products(self, a_parts: Sequence[np.ndarray], b_parts: Sequence[np.ndarray]) -> Any:
        nb, nk = self.n_batch, self.n_summed
        for a, b in zip(a_parts, b_parts):
            a, b = a.transpose(self.a_perm), b.transpose(self.b_perm)
            batch, own_a, summed = a.shape[:nb], a.shape[nb:a.ndim - nk], a.shape[a.ndim - nk:]
            own_b = b.shape[nb + nk:]
            a2 = a.reshape(batch + (math.prod(own_a), math.prod(summed)))
            b2 = b.reshape(batch + (math.prod(summed), math.prod(own_b)))
            yield np.matmul(a2, b2).reshape(batch + own_a + own_b)


class TensorEinsumPair(TensorOperator):
    """Two operands contracted over ``summed`` labels, keeping ``batch`` labels shared by both.

    The output's labels are ``batch``, then ``a``'s other labels, then ``b``'s.
    """

    params = ("a_labels", "b_labels", "batch", "summed")

    @classmethod
    def tile(cls, op: TensorEinsumPair) -> Generator[Any, Any, Tiled]:
        yield from known_sizes(op.inputs)
        a, b = yield from _aligned_pair(*op.inputs, op.a_labels, op.b_labels)
        la, lb, dtype = op.a_labels, op.b_labels, op.outputs[0].dtype
        out_labels = _pair_labels(la, lb, op.batch, op.summed)
        split_of = {lab: a.nsplits[d] for d, lab in enumerate(la)} | {lab: b.nsplits[d] for d, lab in enumerate(lb)}
        nsplits = tuple(split_of[lab] for lab in out_labels)
        block = EinsumPairBlock(a_perm=_order(la, op.batch, op.summed, first=True),
                                b_perm=_order(lb, op.batch, op.summed, first=False),
                                n_batch=len(op.batch), n_summed=len(op.summed), dtype=dtype)
        chunks = []
        for index in itertools.product(*(range(len(s)) for s in nsplits)):
            at = dict(zip(out_labels, index))
            pairs = []
            for k in itertools.product(*(range(len(split_of[lab])) for lab in op.summed)):
                at.update(zip(op.summed, k))
                pairs.append((a.chunk_at(tuple(at[lab] for lab in la)), b.chunk_at(tuple(at[lab] for lab in lb))))
            shape = tuple(nsplits[d][i] for d, i in enumerate(index))
            chunks.append(_sum_of_pairs(block, pairs, index, shape, dtype))
        return Tiled(chunks, nsplits)


def _aligned_pair(a: Any, b: Any, la: Labels, lb: Labels) -> Generator[Any, Any, tuple]:
    """``a`` and ``b`` cut alike along every label they share (views: a finer cut of both)."""
    a_splits, b_splits = list(a.nsplits), list(b.nsplits)
    for da, lab in enumerate(la):
        if lab in lb:
            db = lb.index(lab)
            if a_splits[da] != b_splits[db]:
                a_splits[da] = b_splits[db] = common_splits([a_splits[da], b_splits[db]])
    a = yield from rechunked(a, a_splits)
    b = yield from rechunked(b, b_splits)
    return a, b


def _order(labels: Labels, batch: Labels, summed: Labels, first: bool) -> tuple[int, ...]:
    own = tuple(lab for lab in labels if lab not in batch and lab not in summed)
    seq = batch + own + summed if first else batch + summed + own
    return tuple(labels.index(lab) for lab in seq)


def _pair_labels(la: Labels, lb: Labels, batch: Labels, summed: Labels) -> Labels:
    shared = set(batch) | set(summed)
    return batch + tuple(x for x in la if x not in shared) + tuple(x for x in lb if x not in shared)


class TensorEinsumDiagonal(TensorOperator):
    """``np.diagonal(x, 0, *axes)``: the two axes go, their diagonal comes last."""

    params = ("axes",)

    @classmethod
    def tile(cls, op: TensorEinsumDiagonal) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        yield from known_sizes([inp])
        i, j = op.axes
        splits = list(inp.nsplits)
        splits[i] = splits[j] = common_splits([splits[i], splits[j]])
        inp = yield from rechunked(inp, splits)
        rest = [d for d in range(inp.ndim) if d not in (i, j)]
        nsplits = tuple(splits[d] for d in rest) + (splits[i],)
        chunks = []
        for index in itertools.product(*(range(len(s)) for s in nsplits)):
            src = dict(zip(rest, index[:-1])) | {i: index[-1], j: index[-1]}
            shape = tuple(nsplits[d][k] for d, k in enumerate(index))
            chunks.append(op.copy().new_chunk([inp.chunk_at(tuple(src[d] for d in range(inp.ndim)))],
                                              index=index, shape=shape, dtype=out.dtype, order="C"))
        return Tiled(chunks, nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.diagonal(x, 0, *self.axes).copy()  # numpy's diagonal is a read-only view


# ----------------------------------------------------------------- subscripts
def _operand_positions(args: Sequence) -> list[int]:
    """Where the operands are: after the subscripts string, or every other argument (interleaved)."""
    if args and isinstance(args[0], str):
        return list(range(1, len(args)))
    return list(range(0, len(args) - len(args) % 2, 2))


def _subscripts_text(args: Sequence) -> str:
    """The subscripts as one string (the interleaved form's integer labels as numpy's letters)."""
    if isinstance(args[0], str):
        return args[0].replace(" ", "")

    def letters(sub: Sequence) -> str:
        return "".join("..." if s is Ellipsis else _LETTERS[int(s)] for s in sub)

    text = ",".join(letters(s) for s in args[1::2][:len(args) // 2])
    return text + ("->" + letters(args[-1]) if len(args) % 2 else "")


def parse(subscripts: str, ndims: Sequence[int]) -> tuple[list[Labels], Labels]:
    """Each operand's labels and the output's, an ellipsis spelled out as unused letters
    (right-aligned across operands, as they broadcast). The subscripts are valid (numpy checked them)."""
    lhs, arrow, rhs = subscripts.partition("->")
    terms = lhs.split(",")
    n_ell = [nd - len(t.replace("...", "")) if "..." in t else 0 for t, nd in zip(terms, ndims)]
    spare = [c for c in _LETTERS if c not in subscripts]
    ell = tuple(spare[:max(n_ell, default=0)])
    inputs = []
    for term, n in zip(terms, n_ell):
        head, _, tail = term.partition("...")
        inputs.append(tuple(head) + (ell[len(ell) - n:] if n else ()) + tuple(tail))
    if arrow:
        head, dots, tail = rhs.partition("...")
        return inputs, tuple(head) + (ell if dots else ()) + tuple(tail)
    counts = {c: lhs.count(c) for c in lhs if c.isalpha()}
    return inputs, ell + tuple(sorted(c for c, k in counts.items() if k == 1))


def _mismatch(inputs: Sequence[Labels], shapes: Sequence[tuple]) -> bool:
    """Whether label sizes disagree: within an operand at all, across operands unless one is 1."""
    seen: dict[str, int] = {}
    for labels, shape in zip(inputs, shapes):
        own: dict[str, int] = {}
        for lab, size in zip(labels, shape):
            if own.setdefault(lab, size) != size:
                return True
            prev = seen.setdefault(lab, size)
            if size != prev and 1 not in (size, prev):
                return True
            if prev == 1:
                seen[lab] = size
    return False


def _stand_ins(args: Sequence, tensors: Sequence[Tensor], positions: Sequence[int], true_shape: bool) -> list:
    """The arguments with each operand replaced by an array numpy can check cheaply."""
    out = list(args)
    for pos, t in zip(positions, tensors):
        if true_shape:  # zero strides: the real shape in one element of memory
            out[pos] = np.broadcast_to(np.zeros((), dtype=t.dtype), t.shape)
        else:
            out[pos] = np.zeros(tuple(min(int(s), 1) for s in t.shape), dtype=t.dtype)
    return out


def _checked(args: Sequence, kw: dict) -> tuple[list[Tensor], list[int], np.dtype]:
    """The operands as tensors, their positions in ``args``, and the result dtype (numpy's errors)."""
    if not args:
        np.einsum(**kw)  # numpy's own error for a call without operands
    positions = _operand_positions(args)
    tensors = [astensor(args[p]) for p in positions]
    for t in tensors:
        if has_unknown(t.shape):
            raise ValueError(f"einsum needs its operands' shapes; an operand has shape {t.shape}, "
                             "unknown until it runs: call .execute() on it first")
    dtype = np.asarray(np.einsum(*_stand_ins(args, tensors, positions, False), **kw)).dtype
    return tensors, positions, dtype


def _size_error(args: Sequence, tensors: Sequence[Tensor], positions: Sequence[int], optimize: Any) -> None:
    """numpy's error for disagreeing label sizes (it raises before computing anything)."""
    try:
        np.einsum(*_stand_ins(args, tensors, positions, True), optimize=optimize)
    except ValueError as e:
        raise ValueError(str(e)) from None
    raise ValueError("einsum: label sizes disagree: " + ", ".join(str(t.shape) for t in tensors))


# ----------------------------------------------------------------- contraction
Term = tuple[Tensor, Labels]


def _summed_out(t: Tensor, labels: Labels, keep: set[str]) -> Term:
    """``t`` summed over its labels not in ``keep``."""
    axes = tuple(d for d, lab in enumerate(labels) if lab not in keep)
    if not axes:
        return t, labels
    return tensor_sum(t, axis=axes, dtype=t.dtype), tuple(lab for lab in labels if lab in keep)


def _distinct(t: Tensor, labels: Labels, sizes: dict[str, int]) -> Term:
    """``t`` with broadcast (size-1) dims dropped and repeated labels on their diagonal."""
    if any(s == 1 and sizes[lab] != 1 for s, lab in zip(t.shape, labels)):
        drop = [s == 1 and sizes[lab] != 1 for s, lab in zip(t.shape, labels)]
        t = t[tuple(0 if d else slice(None) for d in drop)]
        labels = tuple(lab for lab, d in zip(labels, drop) if not d)
    while len(set(labels)) < len(labels):
        lab = next(x for x in labels if labels.count(x) > 1)
        i = labels.index(lab)
        j = labels.index(lab, i + 1)
        data = tensor_data(t)
        shape = tuple(s for d, s in enumerate(data.shape) if d not in (i, j)) + (data.shape[i],)
        t = TensorEinsumDiagonal(axes=(i, j)).new_tensor([data], shape, data.dtype)
        labels = tuple(x for d, x in enumerate(labels) if d not in (i, j)) + (lab,)
    return t, labels


def _contract(a: Term, b: Term, keep: set[str]) -> Term:
    """Two terms contracted, keeping the labels in ``keep``."""
    (ta, la), (tb, lb) = _summed_out(*a, keep | set(b[1])), _summed_out(*b, keep | set(a[1]))
    shared = [lab for lab in la if lab in lb]
    batch = tuple(lab for lab in shared if lab in keep)
    summed = tuple(lab for lab in shared if lab not in keep)
    if not batch:
        axes = ([la.index(lab) for lab in summed], [lb.index(lab) for lab in summed])
        return tensordot(ta, tb, axes=axes), _pair_labels(la, lb, (), summed)
    labels = _pair_labels(la, lb, batch, summed)
    size = {lab: s for lab, s in zip(la + lb, ta.shape + tb.shape)}
    op = TensorEinsumPair(a_labels=la, b_labels=lb, batch=batch, summed=summed)
    out = op.new_tensor([tensor_data(ta), tensor_data(tb)], tuple(size[lab] for lab in labels), ta.dtype)
    return out, labels


def _path(terms: Sequence[Term], output: Labels, optimize: Any) -> list[tuple[int, ...]]:
    """numpy's contraction order for the prepared terms (its greedy one when ``optimize`` is False)."""
    if len(terms) == 1:
        return [(0,)]
    text = ",".join("".join(labels) for _, labels in terms) + "->" + "".join(output)
    arrays = [np.broadcast_to(np.zeros((), dtype=np.int8), t.shape) for t, _ in terms]
    path, _ = np.einsum_path(text, *arrays, optimize="greedy" if optimize is False else optimize)
    return [tuple(step) for step in path[1:]]


def _contracted(terms: list[Term], output: Labels, optimize: Any) -> Term:
    for step in _path(terms, output, optimize):
        chosen = [terms[i] for i in sorted(step)]
        for i in sorted(step, reverse=True):
            terms.pop(i)
        keep = set(output).union(*(labels for _, labels in terms))
        term = _summed_out(*chosen[0], keep.union(*(labels for _, labels in chosen[1:])))
        for i in range(1, len(chosen)):
            later = {lab for _, labels in chosen[i + 1:] for lab in labels}
            term = _contract(term, chosen[i], keep | later)
        terms.append(term)
    return _summed_out(*terms[0], set(output))


def _into(out: Any, result: Tensor, casting: str) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be a mars Tensor, got {type(out).__name__}")
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"output array has wrong shape: {out.shape}, the result has {result.shape}")
    if out.dtype != result.dtype:
        if not np.can_cast(result.dtype, out.dtype, casting=casting):
            raise TypeError(f"Cannot cast einsum output from {result.dtype!r} to {out.dtype!r} "
                            f"according to the rule {casting!r}")
        result = result.astype(out.dtype)
    out.data = result.data
    return out


def einsum(*operands: Any, out: Any = None, optimize: Any = False, dtype: Any = None, order: str = "K",
           casting: str = "safe") -> Tensor:
    """Einstein summation over chunked tensors, as ``np.einsum``.

    Takes the subscripts string (``"ij,jk->ik"``, implicit output, ``...``,
    repeated labels for traces and diagonals) or numpy's interleaved form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. Contracts pairwise over chunks
    in ``np.einsum_path``'s order for ``optimize`` (``True``/``"greedy"``,
    ``"optimal"`` or an explicit path; greedy when False). ``order`` only
    sets numpy's memory layout; results are C-ordered.

    >>> import mars.tensor as mt
    >>> a = mt.arange(6, chunk_size=2).reshape(2, 3)
    >>> mt.einsum("ij,kj->ik", a, a).execute().fetch()
    array([[ 5, 14],
           [14, 50]])
    """
    kw = {"optimize": optimize, "dtype": dtype, "order": order, "casting": casting}
    tensors, positions, result_dtype = _checked(operands, kw)
    inputs, output = parse(_subscripts_text(operands), [t.ndim for t in tensors])
    if _mismatch(inputs, [t.shape for t in tensors]):
        _size_error(operands, tensors, positions, optimize)
    sizes: dict[str, int] = {}
    for labels, t in zip(inputs, tensors):
        for lab, s in zip(labels, t.shape):
            sizes[lab] = s if sizes.get(lab, 1) == 1 else sizes[lab]
    terms = [_distinct(t if t.dtype == result_dtype else t.astype(result_dtype), labels, sizes)
             for t, labels in zip(tensors, inputs)]
    result, labels = _contracted(terms, output, optimize)
    result = transpose(result, [labels.index(lab) for lab in output]) if labels != output else result
    return _into(out, result, casting) if out is not None else result


def einsum_path(*operands: Any, optimize: Any = "greedy", einsum_call: bool = False) -> Any:
    """numpy's contraction order for an einsum of tensors, from their shapes, as ``np.einsum_path``.

    >>> import mars.tensor as mt
    >>> a = mt.ones((2, 3))
    >>> mt.einsum_path("ij,jk,kl", a, a.T, a, optimize="greedy")[0]
    ['einsum_path', (0, 1), (0, 1)]
    """
    if not operands:
        return np.einsum_path(optimize=optimize, einsum_call=einsum_call)
    positions = _operand_positions(operands)
    tensors = [astensor(operands[p]) for p in positions]
    for t in tensors:
        if has_unknown(t.shape):
            raise ValueError(f"einsum_path needs its operands' shapes; an operand has shape {t.shape}, "
                             "unknown until it runs: call .execute() on it first")
    args = _stand_ins(operands, tensors, positions, True)
    return np.einsum_path(*args, optimize=optimize, einsum_call=einsum_call)
