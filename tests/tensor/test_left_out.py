"""Nothing of numpy's namespace is silently missing from mars.tensor: every public name of numpy,
numpy.linalg, numpy.fft and numpy.random is provided, or listed in mars.tensor.leftout (and then
raises NotImplementedError saying what to use); docs/tensor.md lists them as the tables do."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import mars.tensor as mt
from mars.tensor.leftout import LEFT_OUT, NOT_YET, render

NAMESPACES = [("", np, mt), ("linalg", np.linalg, mt.linalg), ("fft", np.fft, mt.fft), ("random", np.random, mt.random)]
#: numpy's own test-suite runner, in every namespace: not part of the array API
NOT_API = {"test"}
#: deprecated by numpy (they warn when called): not worth adding
DEPRECATED = {"row_stack"}
DOCS = Path(__file__).resolve().parents[2] / "docs" / "tensor.md"
BEGIN, END = "<!-- left-out: begin (python -m mars.tensor.leftout) -->", "<!-- left-out: end -->"


def public_names(module: ModuleType) -> list[str]:
    # numpy's __all__, where it has one: another library imported first may add attributes to numpy's
    # namespace (importing scikit-learn leaves an np.expm1x behind), which are not numpy's API
    listed = set(getattr(module, "__all__", dir(module)))
    names = []
    for name in sorted(set(dir(module)) & listed):
        if name.startswith("_") or name in NOT_API or name in DEPRECATED:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            try:
                getattr(module, name)
            except DeprecationWarning:  # deprecated on access
                continue
        names.append(name)
    return names


def qualified(namespace: str, name: str) -> str:
    return f"{namespace}.{name}" if namespace else name


def provides(module: ModuleType, name: str) -> bool:
    try:
        getattr(module, name)
    except (AttributeError, NotImplementedError):
        return False
    return True


def test_every_numpy_name_is_provided_or_left_out():
    missing = [qualified(ns, name) for ns, np_mod, mt_mod in NAMESPACES for name in public_names(np_mod)
               if not provides(mt_mod, name) and qualified(ns, name) not in LEFT_OUT | NOT_YET]
    assert not missing, f"numpy names neither in mars.tensor nor in mars.tensor.leftout: {missing}"


@pytest.mark.parametrize("name", sorted(LEFT_OUT | NOT_YET))
def test_left_out_name_raises_with_advice(name):
    namespace, _, attr = name.rpartition(".")
    module = {ns: mt_mod for ns, _, mt_mod in NAMESPACES}[namespace]
    assert hasattr({ns: np_mod for ns, np_mod, _ in NAMESPACES}[namespace], attr), f"numpy has no {name}"
    advice = (LEFT_OUT | NOT_YET)[name]
    with pytest.raises(NotImplementedError, match=f"does not provide {name}") as info:
        getattr(module, attr)
    assert advice in str(info.value)
    assert attr not in vars(module), f"{name} is provided and left out at once"


def test_tables_do_not_overlap_and_unknown_names_stay_attribute_errors():
    assert not set(LEFT_OUT) & set(NOT_YET)
    assert not hasattr(mt, "no_such_name") and getattr(mt.random, "no_such_name", None) is None
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        mt.no_such_name  # noqa: B018


def test_numpy_dispatch_of_a_left_out_function_says_what_to_use():
    with pytest.raises(NotImplementedError, match="does not provide real_if_close: its result's dtype depends"):
        np.real_if_close(mt.ones(3))


def test_docs_list_is_the_rendered_table():
    text = DOCS.read_text()
    assert BEGIN in text and END in text, f"{DOCS} lacks the left-out markers"
    section = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert section.strip("\n") == render().strip("\n"), "docs/tensor.md is stale: paste `python -m mars.tensor.leftout`"


def test_module_prints_the_rendered_table():
    out = subprocess.run([sys.executable, "-m", "mars.tensor.leftout"], capture_output=True, text=True, check=True,
                         cwd=DOCS.parents[1])
    assert out.stdout == render()
