"""The numpy names that ``mars.tensor`` does not provide, and what to use instead.

Two tables: :data:`LEFT_OUT` holds names left out on purpose (what they do
does not fit a lazy, chunked engine, or numpy's own object serves), and
:data:`NOT_YET` names that fit and are still to be written (empty while none
is). Accessing one on
``mars.tensor`` (or ``mt.random``) raises ``NotImplementedError`` with the
advice; any other unknown name is an ``AttributeError`` as usual. The list in
``docs/tensor.md`` is rendered from these tables (``python -m
mars.tensor.leftout``), and a test keeps the two equal.

>>> import mars.tensor as mt
>>> try:
...     mt.loadtxt
... except NotImplementedError as e:
...     print(str(e).split(":")[0])
mars.tensor does not provide loadtxt
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_CLIENT_IO = ("whole-array file I/O runs on the client: np.save(f, t.fetch()) to write, "
              "mt.tensor(np.load(f), chunk_size=...) to read")
_TEXT_IO = ("text I/O reads on the client: mars.dataframe.read_csv(...).to_tensor() reads in parallel, "
            "or mt.tensor(np.loadtxt(...))")
_FROM_CLIENT = "builds an array on the client: mt.tensor(np.{name}(...), chunk_size=...)"
_PRINTING = "printing formats values: fetch() the tensor and use numpy's printing (its options apply to the result)"
_ERR_STATE = ("numpy's error state is per thread and the chunks run in workers: set it inside the function "
              "you run with t.map_chunk(...)")
_PER_ELEMENT = ("a Python function per element does not distribute: apply a numpy function to each chunk "
                "with t.map_chunk(np.vectorize(f), dtype=...)")
_ITERATE = "iterating element by element runs on the client: iterate over t.fetch() (or t.flat)"
_POLY_COEF = "works on polynomial coefficients, small arrays: use numpy.{name} on them"
_NUMPY_INFRA = "numpy's own infrastructure, not an array function: use numpy.{name}"
_DTYPE_ALIAS = "a platform-specific alias: use mt.longdouble or mt.clongdouble"

#: name (``"random.x"`` for ``numpy.random.x``) → what to use instead, for names left out on purpose
LEFT_OUT: dict[str, str] = {
    **{n: _CLIENT_IO for n in ("save", "load", "savez", "savez_compressed", "fromfile", "memmap")},
    **{n: _TEXT_IO for n in ("loadtxt", "savetxt", "genfromtxt", "fromregex")},
    **{n: _FROM_CLIENT.format(name=n) for n in ("frombuffer", "fromstring", "fromiter")},
    **{n: _PRINTING for n in ("array2string", "array_repr", "array_str", "set_printoptions", "get_printoptions",
                              "printoptions")},
    **{n: _ERR_STATE for n in ("errstate", "seterr", "geterr", "seterrcall", "geterrcall", "setbufsize",
                               "getbufsize")},
    **{n: _PER_ELEMENT for n in ("vectorize", "frompyfunc")},
    "piecewise": "mt.select(condlist, [f(t) for f in funclist]) evaluates each piece on every chunk",
    **{n: _ITERATE for n in ("nditer", "nested_iters", "ndenumerate")},
    "flatiter": "t.flat gives a tensor's elements in C order",
    **{n: _POLY_COEF.format(name=n) for n in ("poly", "polyadd", "polysub", "polymul", "polydiv", "polyder",
                                              "polyint", "roots", "poly1d")},
    "polynomial": "numpy.polynomial's classes hold coefficients, small arrays: evaluate them on tensors with "
                  "elementwise arithmetic",
    **{n: _NUMPY_INFRA.format(name=n) for n in ("ctypeslib", "f2py", "lib", "testing", "typing", "get_include",
                                                "show_config", "show_runtime", "info")},
    "real_if_close": "its result's dtype depends on the values, which a lazy tensor's dtype cannot: decide on "
                     "the client, as mt.real(t) if bool(mt.all(mt.abs(mt.imag(t)) < tol * np.finfo(t.dtype).eps)) "
                     "else t",
    "exceptions": "mars raises numpy's exceptions: catch them from numpy.exceptions",
    "char": "mars tensors hold numbers: use mars.dataframe's Series.str for text",
    "strings": "mars tensors hold numbers: use mars.dataframe's Series.str for text",
    "rec": "records are tables: use mars.dataframe.DataFrame",
    "recarray": "records are tables: use mars.dataframe.DataFrame",
    "record": "records are tables: use mars.dataframe.DataFrame",
    "ma": "masked arrays: keep NaN for missing values and use the nan* reductions, or mars.dataframe",
    "matrix": "numpy discourages np.matrix: use 2-D tensors with @ and mt.linalg",
    "asmatrix": "numpy discourages np.matrix: use 2-D tensors with @ and mt.linalg",
    "bmat": "numpy discourages np.matrix: build 2-D tensors with mt.block",
    "emath": "np.emath's domain-dependent results: cast to complex first, as mt.sqrt(t.astype(complex))",
    "ndarray": "mt.Tensor is the lazy array; t.fetch() returns a numpy ndarray",
    "ufunc": "numpy's ufuncs run lazily on tensors: np.add(t, 1), np.add.reduce(t) and the mt functions of the "
             "same names",
    "broadcast": "mt.broadcast_shapes and mt.broadcast_arrays",
    "may_share_memory": "tensors are values, never memory: results are new data (a view's writes reach its base "
                        "through mars itself)",
    "shares_memory": "tensors are values, never memory: results are new data (a view's writes reach its base "
                     "through mars itself)",
    "c_": "index tricks building arrays on the client: use mt.concatenate, mt.column_stack or mt.stack",
    "r_": "index tricks building arrays on the client: use mt.concatenate, mt.column_stack or mt.stack",
    "complex256": _DTYPE_ALIAS,
    "float128": _DTYPE_ALIAS,
    "random.bit_generator": "numpy's implementation module: use mt.random.BitGenerator, SeedSequence and the "
                            "bit generators re-exported in mt.random",
    "random.mtrand": "numpy's implementation module: use mt.random.RandomState and the mt.random functions",
}

#: names that fit a chunked engine and are still to be written → what to do meanwhile
NOT_YET: dict[str, str] = {}


def advice(qualified: str) -> str | None:
    """The message for a left-out name (``"random.x"`` inside ``mt.random``), or None."""
    if qualified in LEFT_OUT:
        return f"mars.tensor does not provide {qualified}: {LEFT_OUT[qualified]}"
    if qualified in NOT_YET:
        return f"mars.tensor does not provide {qualified} yet; meanwhile use {NOT_YET[qualified]}"
    return None


def module_getattr(namespace: str, module_name: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` raising ``NotImplementedError`` for the left-out names of ``namespace``."""

    def __getattr__(name: str) -> Any:
        message = advice(f"{namespace}.{name}" if namespace else name)
        if message is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise NotImplementedError(message)

    return __getattr__


#: ``mars.tensor``'s ``__getattr__`` (imported there under that name)
tensor_getattr = module_getattr("", "mars.tensor")


def render() -> str:
    """The markdown list of ``docs/tensor.md`` (between its left-out markers).

    >>> render().splitlines()[0]
    'Left out on purpose (accessing one raises `NotImplementedError` saying what to use instead):'
    """
    lines = ["Left out on purpose (accessing one raises `NotImplementedError` saying what to use instead):", ""]
    lines += _grouped(LEFT_OUT)
    if NOT_YET:
        lines += ["", "Not written yet (they fit a chunked engine; the same error says what to use meanwhile):", ""]
        lines += _grouped(NOT_YET)
    return "\n".join(lines) + "\n"


def _grouped(table: dict[str, str]) -> list[str]:
    """One bullet per distinct advice, listing its names."""
    groups: dict[str, list[str]] = {}
    for name, text in table.items():
        groups.setdefault(text, []).append(name)
    return [f"- {' '.join(f'`{n}`' for n in names)}: {text}" for text, names in groups.items()]


if __name__ == "__main__":
    print(render(), end="")
