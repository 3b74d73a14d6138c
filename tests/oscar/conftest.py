"""Fixtures shared by the oscar tests: in-process pools and a child-process leak check."""

from __future__ import annotations

import multiprocessing
import time

import pytest
import pytest_asyncio

import mars.oscar as mo
from oscar_actors import WHERE, live_children


@pytest.fixture(autouse=True, scope="module")
def no_leaked_processes():
    """Every sub pool process a test module starts is gone when the module ends."""
    before = {p.pid for p in live_children()}
    yield
    multiprocessing.active_children()  # reap what multiprocessing already knows is done
    deadline = time.monotonic() + 5
    while True:
        leaked = [p for p in live_children() if p.pid not in before]
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not leaked, f"child processes outlived their pools: {leaked}"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def two_sub_pools():
    """A main pool with two sub pool processes, shared by a test module."""
    pool = await mo.create_actor_pool("127.0.0.1", n_process=2)
    yield pool
    await pool.stop()


@pytest.fixture(params=WHERE)
def where(request) -> str:
    """Where the actor under test lives: see oscar_actors.WHERE."""
    return request.param


@pytest.fixture
async def pool():
    """An in-process main pool (no sub pool processes), stopped after the test."""
    pool = await mo.create_actor_pool("127.0.0.1", n_process=0)
    yield pool
    await pool.stop()
