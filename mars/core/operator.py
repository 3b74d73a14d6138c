"""Operators: small declarative classes that make tileables and chunks.

An operator names its parameters (``params``), infers its outputs' metadata
when it is applied to inputs, knows how to ``tile()`` its tileable into
chunks and chunk-level operators, and has a pure ``execute(*inputs)`` that
returns the chunk's value (a tuple when the op has several outputs).

The same class serves both levels: a chunk-level op is a ``copy()`` of the
tileable-level op (or of another class for another stage), applied to chunks.
Keys are derived from the op's class, its parameters and its inputs' keys, so
the same expression built twice has the same keys.

>>> # a sketch: an elementwise op needs only the function it applies
>>> # class Sqrt(TensorUnaryOp): func = np.sqrt
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .entity import ChunkData, TileableData
from .tokenize import normalize, tokenize_str


def _dead_ref() -> None:
    """Stands for an output that was not unpickled with its op."""
    return


@dataclass
class Tiled:
    """What ``tile()`` returns for one output: its chunks (C order) and nsplits."""

    chunks: list[ChunkData]
    nsplits: tuple[tuple, ...]


class Operator:
    """Base of every operator; subclasses declare ``params`` and override the hooks."""

    #: names of the parameters; each is an attribute with a class-level default
    params: ClassVar[tuple[str, ...]] = ()
    #: params left out of the key (e.g. a data buffer whose hash another param carries)
    unkeyed: ClassVar[tuple[str, ...]] = ()
    #: class of the tileables / chunks it makes
    tileable_type: ClassVar[type[TileableData]] = TileableData
    #: whether the chunk op may be fused with its neighbours into one subtask
    fusible: ClassVar[bool] = False
    #: runs on a CUDA device (set on the instance: by the user's ``gpu=True``, from its
    #: inputs, or on every chunk op that tiling a GPU op made; see mars.core.device)
    gpu: bool | None = None

    def __init__(self, **kw: Any):
        cls = type(self)
        for name in cls.params:
            setattr(self, name, kw.pop(name) if name in kw else getattr(cls, name, None))
        if kw:
            raise TypeError(f"{cls.__name__} got unknown parameters {sorted(kw)}; it takes {list(cls.params)}")
        self.inputs: list = []
        self._outputs: list[Callable[[], Any]] = []
        self.output_keys: list[str] = []
        self.key = ""

    @property
    def outputs(self) -> list:
        """The entities this op made (held weakly: an op never keeps its outputs alive)."""
        return [ref() for ref in self._outputs]

    # ----------------------------------------------------------------- building
    def copy(self, **changes: Any) -> Operator:
        """A new op of the same class and parameters (with ``changes``), not yet applied, on the same device."""
        kw = {name: getattr(self, name) for name in type(self).params}
        kw.update(changes)
        op = type(self)(**kw)
        if self.gpu is not None:
            op.gpu = self.gpu
        return op

    def bare(self) -> Operator:
        """This op without its graph (no inputs, no outputs): what a subtask carries to a worker.

        A shallow copy, cheaper than :meth:`copy` (no ``__init__`` checks to run again).
        """
        op = object.__new__(type(self))
        op.__dict__.update(self.__dict__)
        op.inputs = []
        op._outputs = []
        return op

    def _compute_key(self, inputs: Sequence) -> str:
        cls = type(self)
        # the parameters' part is kept: an optimizer's copy of an op on new inputs (fresh_op) keys only those
        params = self.__dict__.get("_params_key")
        if params is None:
            params = self._params_key = "|".join(
                [cls.__module__, cls.__qualname__,
                 *(normalize(getattr(self, p)) for p in cls.params if p not in cls.unkeyed)])
        parts = [params]
        parts.extend(getattr(i, "key", None) or normalize(i) for i in inputs)
        if self.gpu:
            parts.append("gpu")  # the same expression on the GPU is another result (its random values, say)
        return tokenize_str("|".join(parts))

    def _apply(self, inputs: Sequence, kws: Sequence[dict], entity_type: type) -> list:
        self.inputs = list(inputs)
        self.key = self._compute_key(self.inputs)
        outputs = []
        for i, kw in enumerate(kws):
            key = self.key if len(kws) == 1 else tokenize_str(f"{self.key}|{i}")
            outputs.append(entity_type(self, key=key, output_index=i, **kw))
        self._outputs = [weakref.ref(o) for o in outputs]
        self.output_keys = [o.key for o in outputs]
        return outputs

    def new_tileables(self, inputs: Sequence, kws: Sequence[dict]) -> list[TileableData]:
        """Apply the op to input tileables, making one tileable per dict of metadata."""
        return self._apply(inputs, kws, self.tileable_type)

    def new_tileable(self, inputs: Sequence, **kw: Any) -> TileableData:
        return self.new_tileables(inputs, [kw])[0]

    def new_chunks(self, inputs: Sequence, kws: Sequence[dict]) -> list[ChunkData]:
        """Apply the (chunk-level) op to input chunks, one chunk per dict (``index``, ``shape``, ...)."""
        return self._apply(inputs, kws, self.tileable_type.chunk_type)

    def new_chunk(self, inputs: Sequence, **kw: Any) -> ChunkData:
        return self.new_chunks(inputs, [kw])[0]

    # ----------------------------------------------------------------- the hooks
    @classmethod
    def tile(cls, op: Operator) -> Tiled | list[Tiled] | Iterable:
        """Tileable → chunks. May be a generator that yields chunks it needs computed first."""
        raise NotImplementedError(f"{cls.__name__} cannot be tiled")

    def execute(self, *inputs: Any) -> Any:
        """The chunk function: input values in, output value (tuple when several) out."""
        raise NotImplementedError(f"{type(self).__name__} has no chunk function")

    def __reduce__(self) -> tuple:
        # attribute names go out as one interned tuple per class and layout: pickle
        # writes it once per message, not once per op (thousands of ops per batch)
        state = self.__getstate__()
        names = _interned(tuple(state))
        return _rebuild_op, (type(self), names, tuple(state[n] for n in names))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        # weak references do not pickle: each output links itself back when it is
        # unpickled (see EntityData.__setstate__); a Subtask pickles a bare copy
        state["_outputs"] = []
        state.pop("_token", None)
        state.pop("_params_key", None)
        return state

    def link_output(self, entity: Any, index: int) -> None:
        """Point output ``index`` at ``entity`` (used when a graph is unpickled)."""
        refs = self._outputs
        while len(refs) <= index:
            refs.append(_dead_ref)
        refs[index] = weakref.ref(entity)

    def __mars_tokenize__(self) -> Any:
        # an op used as a parameter (a reduction carried by its chunk stages) is
        # normalized once: ops are not changed after they are built
        token = self.__dict__.get("_token")
        if token is None:
            cls = type(self)
            token = self._token = normalize(
                (cls.__module__, cls.__qualname__, [getattr(self, p) for p in cls.params if p not in cls.unkeyed])
            )
        return token

    def __repr__(self) -> str:
        args = ", ".join(f"{p}={_short(getattr(self, p))}" for p in type(self).params)
        return f"{type(self).__name__}({args})"


_NAMES: dict[tuple, tuple] = {}


def _interned(names: tuple) -> tuple:
    return _NAMES.setdefault(names, names)


def _rebuild_op(cls: type, names: tuple, values: tuple) -> Operator:
    op: Operator = object.__new__(cls)
    op.__dict__.update(zip(names, values))
    return op


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Fetch:
    """What a generator ``tile()`` yields to get chunk *values*, not just their shapes."""

    __slots__ = ("chunks",)

    def __init__(self, chunks: Sequence[ChunkData]):
        self.chunks = list(chunks)


class HeldData(Operator):
    """The op of a chunk whose data a session already holds (a client's view of a computed result).

    It is never run: a graph reaching it reads the held data by the chunk's
    key. Running it means the data was freed. A session that does not hold
    such chunks tiles their tileable again instead (see :func:`retiled_unless_held`).

    ``ranges`` (None: not known) maps integer columns of a held partition to
    their smallest and largest values (None when it has no rows), as the client
    found them when it uploaded the data: a grouping by one of them needs no
    stage to learn them.
    """

    params = ("ranges",)

    def execute(self, *inputs: Any) -> Any:
        raise RuntimeError(
            "this chunk's data is no longer held by the session (it was released, or the session restarted); "
            "build the expression again"
        )


def held_chunks(data: Any, chunks: Sequence[tuple[str, tuple, tuple]], ranges: Sequence[Any] | None = None) -> list:
    """Chunks of tileable ``data`` standing for held results: ``(key, index, shape)`` each, with their
    ``ranges`` (see :class:`HeldData`) where known."""
    extra = {k: v for k, v in data.params().items() if k != "shape"}
    chunk_type = data.chunk_type
    out = []
    for i, (key, index, shape) in enumerate(chunks):
        op = HeldData(ranges=ranges[i] if ranges is not None else None)
        chunk = chunk_type(op, tuple(index), tuple(shape), key, **extra)
        op.output_keys = [key]
        op.link_output(chunk, 0)
        out.append(chunk)
    return out


def _stands_for_held(data: TileableData) -> bool:
    return data.chunks is not None and any(isinstance(c.op, HeldData) for c in data.chunks)


@contextlib.contextmanager
def retiled_unless_held(targets: Sequence[TileableData], holds: Callable[[TileableData], bool]) -> Iterator[None]:
    """While it lasts, tileables whose chunks stand for another session's results are untiled.

    An executed object carries chunks that only name its results (:class:`HeldData`).
    Used in a session that does not hold them (``holds`` says), or after its
    session closed, it is computed again from its lineage, its op graph (a
    random tensor gives the same values: its seed is a parameter). The
    targets keep the chunks the run gives them; the others get their old
    chunks back afterwards, for the session that holds them. On a failure
    every one gets its old chunks back.
    """
    untiled: list[tuple[TileableData, Any, Any]] = []
    seen: set[int] = set()
    stack = list(targets)
    while stack:
        node = stack.pop()
        if id(node) in seen or not isinstance(node, TileableData):
            continue
        seen.add(id(node))
        if node.chunks is None:
            stack.extend(node.op.inputs)
        elif _stands_for_held(node) and not holds(node):
            untiled.append((node, node.chunks, node.nsplits))
            node.chunks = node.nsplits = None
            stack.extend(node.op.inputs)
    target_ids = {id(t) for t in targets}
    try:
        yield
    except BaseException:
        target_ids = set()
        raise
    finally:
        for node, chunks, nsplits in untiled:
            if id(node) not in target_ids:
                node.chunks, node.nsplits = chunks, nsplits
