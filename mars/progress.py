"""The progress bar of a run, drawn to suit where the output goes.

Both sessions (the embedded one in :mod:`mars.session`, the cluster client in
:mod:`mars.remote`) draw through :class:`Progress`, so it lives below both.

- In a terminal: a live tqdm bar, left on screen when the run ends.
- In Jupyter: tqdm's widget bar (``tqdm.auto``), left in the cell.
- Anywhere else (a log file, a pipe): plain lines, the first ten seconds
  apart and then further apart as the run goes on, so an hour-long run
  writes a few dozen lines, not thousands.

``show`` is ``execute(show_progress=...)``: True draws always, False never,
None defers to ``mars.options.show_progress``, whose None draws only for
runs that last over about a second (a quick run writes nothing).
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from .core.options import options

__all__ = ["Progress"]

#: with show_progress None, a run shorter than this draws nothing
DELAY_SECONDS = 1.0
#: in a file or a pipe, the least time between two lines
PLAIN_INTERVAL_SECONDS = 10.0


class Progress:
    """``progress(done, total)`` after each finished chunk; ``close()`` when the run ends.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> progress = Progress(True, file=out)
    >>> for i in range(1, 1001):
    ...     progress(i, 1000)
    >>> progress.close()
    >>> lines = out.getvalue().splitlines()
    >>> len(lines) <= 3, "100%" in lines[-1]
    (True, True)
    """

    def __init__(self, show: bool | None, file: TextIO | None = None):
        if show is None:
            show = options.show_progress
        self._delay = 0.0
        if show is None:
            show, self._delay = True, DELAY_SECONDS
        self._show = bool(show)
        self._file = sys.stderr if file is None else file
        self._bar: Any = None
        self._plain = False

    def __call__(self, done: int, total: int) -> None:
        if not self._show:
            return
        bar = self._bar
        if bar is None:
            bar = self._bar = self._open(total)
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.update(0)
        if self._plain:
            # lines grow further apart as the run goes on: ~10% of the time so far
            bar.mininterval = max(PLAIN_INTERVAL_SECONDS, 0.1 * (time.time() - bar.start_t))

    def _open(self, total: int) -> Any:
        # tqdm loads only when a bar is drawn: ``import mars`` stays fast
        kw: dict[str, Any] = {"total": total, "delay": self._delay, "unit": "chunk", "leave": True, "miniters": 1}
        if _in_notebook(self._file) or _isatty(self._file):
            from tqdm.auto import tqdm

            return tqdm(file=self._file, **kw)
        from tqdm.std import tqdm as plain_tqdm

        self._plain = True
        return plain_tqdm(file=_Lines(self._file), ascii=True, mininterval=PLAIN_INTERVAL_SECONDS,
                          maxinterval=float("inf"), **kw)

    def close(self) -> None:
        """Leave the final state on screen (if the bar was due to show at all)."""
        bar = self._bar
        if bar is None:
            return
        due = bar.start_t + bar.delay
        if bar.last_print_t < due <= time.time():
            # the run outlasted the delay with no redraw since: tqdm's close() draws the end state
            bar.last_print_t = time.time()
            if getattr(bar, "displayed", True) is False:  # a notebook widget shows only once displayed
                bar.refresh()
        bar.close()


def _isatty(file: Any) -> bool:
    try:
        return bool(file.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


def _in_notebook(file: Any) -> bool:
    # the test tqdm.auto makes; a notebook's stderr is no terminal but shows a widget
    return "ipykernel.zmqshell" in sys.modules and file in (sys.stderr, sys.stdout)


class _Lines:
    """A file for tqdm that turns each redraw (``"\\r" + status``) into one line of its own."""

    def __init__(self, file: Any):
        self._file = file

    def write(self, text: str) -> None:
        status = text.replace("\x1b[A", "").strip("\r\n ")
        if status:
            self._file.write(status.rsplit("\r", 1)[-1].rstrip() + "\n")
            self.flush()

    def flush(self) -> None:
        flush = getattr(self._file, "flush", None)
        if flush is not None:
            flush()
