"""mars.learn tests: a fresh default local session per test, and the chunkings every estimator is checked on."""

from __future__ import annotations

import pytest

import mars

pytest.importorskip("sklearn")

#: chunkings of a 13 x 4 matrix: one chunk, even, uneven rows and columns (a size-1 chunk), and size-1 rows
ROW_CHUNKS = [None, 5, ((6, 1, 6), (3, 1)), (1, 2)]


@pytest.fixture(autouse=True)
def _fresh_session():
    """Each test gets its own default local session, closed afterwards."""
    sess = mars.new_session()
    yield sess
    sess.close()


@pytest.fixture(params=ROW_CHUNKS, ids=["one", "even", "uneven", "rows1"])
def row_chunks(request):
    """A chunk_size for a 13-row matrix: one chunk, even, uneven, or one row per chunk."""
    return request.param
