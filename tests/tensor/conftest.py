"""Each tensor test runs in a fresh default local session."""

from __future__ import annotations

import pytest

import mars


@pytest.fixture(autouse=True)
def _fresh_session():
    """Each test gets its own default local session, closed afterwards."""
    sess = mars.new_session()
    yield sess
    sess.close()
