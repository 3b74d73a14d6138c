"""The Python blocks of README.md and docs/*.md run as written, so the docs cannot drift from the code.

Each file's ```python blocks are joined, in order, into one script run in a
fresh interpreter (a block may use what an earlier one defined; a script,
so that spawned sub processes can import its ``__main__``). A block fenced
as ```python no-run (it needs another machine, a running cluster at a
placeholder address, or is a fragment of a larger program) is compiled, top-
level ``await`` allowed, but not run.
"""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks(path: pathlib.Path) -> list[tuple[int, bool, str]]:
    """(line, runs, source) of each Python block of ``path``."""
    text = path.read_text()
    found = []
    for m in _BLOCK.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        found.append((line, "no-run" not in m.group(1).split(), m.group(2)))
    return found


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_every_python_block_compiles(path: pathlib.Path) -> None:
    for line, _, source in blocks(path):
        try:
            compile(source, f"{path.name}:{line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except SyntaxError as e:
            raise AssertionError(f"{path.name}, the block at line {line}, does not compile: {e}") from None


RUNNABLE = [p for p in DOCS if any(runs for _, runs, _ in blocks(p))]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_the_runnable_blocks_run(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    parts = [f"# {path.name}, line {line}\n{source}" for line, runs, source in blocks(path) if runs]
    script = tmp_path / f"snippets_{path.stem}.py"
    script.write_text("\n".join(parts))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, f"{path.name}'s blocks failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
