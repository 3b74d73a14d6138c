"""Each dataframe test runs in a fresh default local session; ``strategies`` records the join strategies chosen,
``stages`` the tiling stages run."""

from __future__ import annotations

import sys

import pytest

import mars


@pytest.fixture(autouse=True)
def _fresh_session():
    sess = mars.new_session()
    yield sess
    sess.close()


@pytest.fixture
def strategies(monkeypatch):
    """The join strategies chosen (``merge.choose_strategy``'s answers), in order."""
    merge_module = sys.modules["mars.dataframe.merge"]
    seen: list[str] = []
    choose = merge_module.choose_strategy

    def spy(*args):
        seen.append(choose(*args))
        return seen[-1]

    monkeypatch.setattr(merge_module, "choose_strategy", spy)
    return seen


@pytest.fixture
def stages(monkeypatch):
    """The op names of the chunks of each stage the session runs while tiling."""
    from mars.session import Session

    seen: list[list[str]] = []
    run_stage = Session._run_stage

    def recording(self, chunks, want, keys, cancel):
        seen.append(sorted(type(c.op).__name__ for c in chunks))
        return run_stage(self, chunks, want, keys, cancel)

    monkeypatch.setattr(Session, "_run_stage", recording)
    return seen
