"""Each dataframe test runs in a fresh default local session."""

from __future__ import annotations

import pytest

import mars


@pytest.fixture(autouse=True)
def _fresh_session():
    sess = mars.new_session()
    yield sess
    sess.close()
