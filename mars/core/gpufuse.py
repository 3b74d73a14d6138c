"""One CuPy kernel for a fused subtask's leading chain of elementwise GPU steps.

A fused subtask runs its steps one after the other; on a GPU each
elementwise step is a kernel launch and a full-size intermediate array in
device memory. Where the subtask starts with a chain of such steps (ops that
offer ``kernel_spec()``: a CuPy function name, operands, no keywords), the
chain becomes one ``cupy.fuse`` kernel that reads its inputs once and
writes only the chain's last value. Kernels are cached by the chain's
structure (functions and wiring), so chunks of one tensor share one
compiled kernel; a scalar beside an array operand is an argument of the
kernel, not part of its code, so ``x * 2`` and ``x * 3`` share one too. The
scalar is passed with the dtype numpy gives it beside that operand (NEP 50:
``float32_array * 2.5`` computes in float32), so the fused kernel computes
what the steps one by one would. Where CuPy cannot fuse a chain, the steps
run one by one as before (and that chain is not tried again).

>>> plan([], [], "out") is None
True
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from .device import cupy_module, to_device

logger = logging.getLogger(__name__)

#: compiled kernels by chain structure; None marks a chain CuPy could not fuse
_KERNELS: dict[tuple, Any] = {}
#: how many chunks ran through a fused kernel (tests read it)
STATS = {"fused": 0, "fallback": 0}


def plan(steps: Sequence[Any], input_keys: Sequence[str],
         output_key: str) -> tuple[int, int, list[str], tuple, tuple] | None:
    """(first step of the chain, steps in it, its outside inputs, its structure, its scalar arguments), or
    None when fewer than two steps chain. The chain is the first run of kernel steps (a source may come
    before it)."""
    found = _plan(steps, output_key)
    if found is None:
        return None
    start, n, outside, desc = found
    # inputs that only later steps read are not the chain's
    used = sorted({i for _, wired in desc for kind, i in wired if kind == "in"})
    consts: list = []
    lifted = []
    for func, wired in desc:
        lift = sum(kind == "c" for kind, _ in wired) == 1 and len(wired) == 2
        new = []
        for kind, value in wired:
            if kind == "c" and lift and type(value) in (bool, int, float, complex):
                new.append(("k", len(consts)))
                consts.append(value)
            else:
                new.append((kind, value))
        lifted.append((func, tuple(new)))
    return start, n, [outside[i] for i in used], (tuple(used), tuple(lifted)), tuple(consts)


def _plan(steps: Sequence[Any], output_key: str) -> tuple[int, int, list[str], list] | None:
    """The chain's first step, length, outside input keys and steps (constants in place).

    A step's ``op.kernel_spec()`` gives ``(cupy function name, operands)``, each operand
    ``("arg", j)`` for the step's ``j``-th input or ``("const", value)`` for a hashable scalar.
    """
    start = next((i for i, step in enumerate(steps) if _spec(step) is not None), len(steps))
    made: dict[str, int] = {}
    outside: list[str] = []
    desc = []
    for n, step in enumerate(steps[start:]):
        spec = _spec(step)
        if spec is None or len(step.output_keys) != 1 or any(
                kind == "arg" and value >= len(step.input_keys) for kind, value in spec[1]):
            break
        func, operands = spec
        wired = []
        for kind, value in operands:
            if kind == "const":
                wired.append(("c", value))
                continue
            key = step.input_keys[value]
            if key not in made and key not in outside:
                outside.append(key)
            wired.append(("v", made[key]) if key in made else ("in", outside.index(key)))
        made[step.output_keys[0]] = n
        desc.append((func, tuple(wired)))
    n = len(desc)
    while n >= 2 and not _only_last_escapes(steps[start:], n, output_key):
        n -= 1
    if n < 2:
        return None
    return start, n, outside, desc[:n]


_MISSING = object()


def _spec(step: Any) -> tuple[str, list] | None:
    spec = getattr(step.op, "kernel_spec", None)
    if not callable(spec) or not getattr(step.op, "gpu", None):
        return None
    return spec()


def _only_last_escapes(steps: Sequence[Any], n: int, output_key: str) -> bool:
    """Whether the first ``n`` steps' values, but the last one's, are read only inside the chain."""
    inner = {step.output_keys[0] for step in steps[: n - 1]}
    if output_key in inner:
        return False
    return not any(k in inner for step in steps[n:] for k in step.input_keys)


def run_chain(chain: tuple[int, int, list[str], tuple, tuple], steps: Sequence[Any], env: dict[str, Any]) -> bool:
    """Run the chain as one kernel into ``env``; False (nothing done) where CuPy cannot fuse it."""
    start, n, keys, structure, consts = chain
    kernel = _KERNELS.get(structure, _MISSING)
    if kernel is _MISSING:
        kernel = _KERNELS[structure] = _build(structure)
    if kernel is None:
        STATS["fallback"] += 1
        return False
    args = [to_device(env[k]) for k in keys]
    try:
        value = kernel(*args, *typed_scalars(structure, [a.dtype for a in args], consts))
    except Exception as e:  # noqa: BLE001 - CuPy's fusion refuses some types and functions: run step by step
        logger.debug("cupy.fuse could not run %s: %s", [d[0] for d in structure[1]], e)
        _KERNELS[structure] = None
        STATS["fallback"] += 1
        return False
    env[steps[start + n - 1].output_keys[0]] = value
    STATS["fused"] += 1
    return True


def _build(structure: tuple) -> Any:
    used, desc = structure
    cp = cupy_module()
    found = [getattr(cp, func, None) for func, _ in desc]
    if any(f is None for f in found):
        return None
    funcs: list[Any] = found
    slot_of = {orig: pos for pos, orig in enumerate(used)}

    n_in = len(used)

    def chain(*args: Any) -> Any:
        values: list = []
        for func, (_, wired) in zip(funcs, desc):
            argv = [args[slot_of[i]] if kind == "in" else values[i] if kind == "v" else args[n_in + i]
                    if kind == "k" else i for kind, i in wired]
            values.append(func(*argv))
        return values[-1]

    return cp.fuse(kernel_name="mars_chain")(chain)


def typed_scalars(structure: tuple, in_dtypes: Sequence[Any], consts: Sequence[Any]) -> list[Any]:
    """The chain's scalar arguments as numpy scalars of the dtype numpy gives each beside its array operand.

    The operands' dtypes follow the chain step by step, as numpy computes them.

    >>> import numpy as np
    >>> s = ((0,), (("multiply", (("in", 0), ("k", 0))), ("add", (("v", 0), ("k", 1)))))
    >>> [x.dtype.name for x in typed_scalars(s, [np.dtype("float32")], [2, 0.5])]
    ['float32', 'float32']
    >>> [x.dtype.name for x in typed_scalars(s, [np.dtype("int32")], [2, 0.5])]
    ['int32', 'float64']
    """
    import numpy as np

    used, desc = structure
    slot_of = {orig: pos for pos, orig in enumerate(used)}
    out: list[Any] = [None] * len(consts)
    dtypes: list[Any] = []
    for func, wired in desc:
        probes = []
        for kind, i in wired:
            if kind == "in":
                probes.append(np.empty(0, in_dtypes[slot_of[i]]))
            elif kind == "v":
                probes.append(np.empty(0, dtypes[i]))
            elif kind == "c":
                probes.append(i)
        for kind, i in wired:
            if kind == "k":
                other = probes[0].dtype if probes else np.dtype(type(consts[i]))
                out[i] = np.result_type(other, consts[i]).type(consts[i])
                probes.insert([k for k, _ in wired].index("k"), out[i])
        with np.errstate(all="ignore"):
            dtypes.append(getattr(np, func)(*probes).dtype)
    return out
