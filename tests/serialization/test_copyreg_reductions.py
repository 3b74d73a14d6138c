"""What libraries register in copyreg pickles the plain way: numpy's ufuncs and dtype classes (in ops'
parameters, so in every message that carries such an op) never need the cloudpickle fallback."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mars.serialization import core, deserialize, serialize


@pytest.mark.parametrize("obj", [np.add, np.greater, type(np.dtype("float64")), re.compile("a+b"), 1 + 2j,
                                 {"op": np.multiply, "x": np.arange(3)}])
def test_copyreg_types_pickle_without_the_cloudpickle_fallback(obj, monkeypatch):
    def refuse(*args):
        raise AssertionError(f"fell back to cloudpickle for {obj!r}")

    monkeypatch.setattr(core, "_cloudpickle_dumps", refuse)
    back = deserialize(*serialize(obj))
    if isinstance(obj, dict):
        assert back["op"] is np.multiply and back["x"].tolist() == [0, 1, 2]
    else:
        assert back == obj
