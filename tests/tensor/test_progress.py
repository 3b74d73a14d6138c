"""The progress bar as a user sees it: in a log file, in a terminal, or not at all."""

from __future__ import annotations

import io
import time

import numpy as np

import mars
import mars.tensor as mt
from mars.progress import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _many_chunks() -> mt.Tensor:
    # 900 chunks, then a tree sum over them
    return (mt.ones((300, 300), chunk_size=10) * mt.tensor(np.arange(300.0), chunk_size=7)).sum()


def test_a_job_with_many_chunks_writes_a_few_lines_to_a_file(capsys):
    t = _many_chunks()
    t.execute(show_progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert 1 <= len(lines) <= 4, lines
    assert "100%" in lines[-1] and "chunk" in lines[-1]
    assert all("\r" not in line for line in lines)


def test_a_long_run_to_a_file_is_not_redrawn_on_every_chunk():
    out = io.StringIO()
    progress = Progress(True, file=out)
    total = 3000
    start = time.time()
    for i in range(1, total + 1):
        progress(i, total)
        if i % 100 == 0:
            time.sleep(0.05)  # 1.5 s in all: a redraw every 0.1 s would write 15 lines
    progress.close()
    assert time.time() - start > 1.4
    lines = out.getvalue().splitlines()
    assert 2 <= len(lines) <= 3, lines
    assert lines[-1].startswith("100%") and f"{total}/{total}" in lines[-1]


def test_the_final_state_stays_on_a_terminal():
    out = _Terminal()
    progress = Progress(True, file=out)
    for i in range(1, 51):
        progress(i, 50)
    progress.close()
    text = out.getvalue()
    assert text.endswith("\n")
    last = text.rstrip("\n").split("\r")[-1]
    assert "100%" in last and "50/50" in last


def test_a_quick_run_with_the_default_writes_nothing_and_a_slow_one_its_end():
    quick = io.StringIO()
    progress = Progress(None, file=quick)
    for i in range(1, 101):
        progress(i, 100)
    progress.close()
    assert quick.getvalue() == ""

    slow = io.StringIO()
    progress = Progress(None, file=slow)
    progress(0, 2)
    time.sleep(1.1)
    progress(2, 2)
    progress.close()
    lines = slow.getvalue().splitlines()
    assert len(lines) == 1 and "100%" in lines[0] and "2/2" in lines[0]


def test_show_progress_false_writes_nothing(capsys):
    _many_chunks().execute(show_progress=False)
    with mars.option_context({"show_progress": False}):
        _many_chunks().execute()
    out = io.StringIO()
    progress = Progress(False, file=out)
    progress(1, 1)
    progress.close()
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == "" and out.getvalue() == ""


def test_option_true_draws_without_being_asked(capsys):
    with mars.option_context({"show_progress": True}):
        (mt.ones((20, 20), chunk_size=5) + 1).execute()
    err = capsys.readouterr().err
    assert "100%" in err.splitlines()[-1]
