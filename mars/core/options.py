"""Client options: ``mars.options``.

Plain attributes with validation, and ``option_context`` to change them for a
block. Kept free of heavy imports: ``import mars`` loads this lazily.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, Iterator

_DEFAULTS: dict[str, Any] = {
    # a chunk is sized so that it holds at most this many bytes when chunk_size is not given
    "chunk_store_limit": 128 * 1024**2,
    # default chunk_size (None: derived from chunk_store_limit)
    "chunk_size": None,
    # how many partial results one combine step of a tree reduction merges
    "combine_size": 4,
    # run every expression as soon as it is built
    "eager_mode": False,
    # progress bar: True, False, or None for "in a terminal, for runs over ~1 s"
    "show_progress": None,
    # threads of the local chunk executor (None: the cores this process may use)
    "n_threads": None,
    # rewrite dataframe expressions before tiling (mars.dataframe.optimizer)
    "optimize": True,
}


def _check(name: str, value: Any) -> Any:
    if name in ("chunk_store_limit", "combine_size") and (not isinstance(value, int) or value < 2):
        raise ValueError(f"options.{name} must be an integer >= 2, got {value!r}")
    if name == "n_threads" and value is not None and (not isinstance(value, int) or value < 1):
        raise ValueError(f"options.n_threads must be a positive integer or None, got {value!r}")
    if name in ("eager_mode", "optimize") and not isinstance(value, bool):
        raise ValueError(f"options.{name} must be True or False, got {value!r}")
    return value


class Options:
    """The client's options; one instance lives at ``mars.options``.

    Examples
    --------
    >>> from mars.core.options import options, option_context
    >>> with option_context({"combine_size": 8}):
    ...     options.combine_size
    8
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(_DEFAULTS))
        object.__setattr__(self, "_lock", threading.Lock())

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"mars.options has no option {name!r}; known: {sorted(self._values)}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._values:
            raise AttributeError(f"mars.options has no option {name!r}; known: {sorted(self._values)}")
        self._values[name] = _check(name, value)

    def __dir__(self) -> list[str]:
        return sorted(self._values)

    def __repr__(self) -> str:
        return "Options(" + ", ".join(f"{k}={v!r}" for k, v in self._values.items()) + ")"

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def effective_threads(self) -> int:
        if self.n_threads is not None:
            return self.n_threads
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - not Linux
            return max(1, os.cpu_count() or 1)


options = Options()


@contextlib.contextmanager
def option_context(changes: dict[str, Any]) -> Iterator[Options]:
    """Set options for the duration of a ``with`` block, then restore them."""
    old = {}
    for name, value in changes.items():
        old[name] = getattr(options, name)
        setattr(options, name, value)
    try:
        yield options
    finally:
        for name, value in old.items():
            setattr(options, name, value)
