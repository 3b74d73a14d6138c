"""Sub pool processes that die, are restarted, or are stopped."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import psutil
import pytest

import mars.oscar as mo
from oscar_actors import Info, Sleeper, eventually, live_children, running

PROMPT = 2.0  # seconds: "at once", with room for a loaded CI machine


class Events:
    """Records the pool's process callbacks (one plain, one async)."""

    def __init__(self) -> None:
        self.down: list[tuple] = []
        self.recovered: list[tuple] = []

    def on_down(self, address: str, exitcode: int | None) -> None:
        self.down.append((address, exitcode))

    async def on_recover(self, address: str) -> None:
        await asyncio.sleep(0)
        self.recovered.append((address,))

    async def wait(self, down: int, recovered: int) -> None:
        async def counts():
            return len(self.down), len(self.recovered)

        await eventually(counts, lambda c: c == (down, recovered), timeout=10)


async def watched_pool(events: Events, auto_recover: bool = True) -> mo.MainActorPool:
    return await mo.create_actor_pool(
        "127.0.0.1",
        n_process=1,
        auto_recover=auto_recover,
        on_process_down=events.on_down,
        on_process_recover=events.on_recover,
    )


async def test_killed_sub_pool_fails_waiting_callers_at_once_and_comes_back():
    events = Events()
    async with await watched_pool(events) as pool:
        ref = await mo.create_actor(Sleeper, address=pool.address, allocate_strategy=mo.ProcessIndex(1))
        old_pid = await ref.pid()
        waiting = asyncio.create_task(ref.sleep(60))
        await eventually(ref.stats, lambda s: s["started"] == [None])
        killed_at = time.monotonic()
        os.kill(old_pid, signal.SIGKILL)
        with pytest.raises(mo.ServerClosed):
            await asyncio.wait_for(waiting, 10)
        assert time.monotonic() - killed_at < PROMPT

        await events.wait(down=1, recovered=1)
        assert events.down[0][0] == ref.address and events.recovered == [(ref.address,)]

        new = await mo.create_actor(Sleeper, address=pool.address, allocate_strategy=mo.ProcessIndex(1))
        assert new.address == ref.address  # restarted at the same address
        assert await new.pid() not in (old_pid, os.getpid())
        with pytest.raises(mo.ActorNotExist):  # the old actors died with their process
            await ref.sleep(0)


async def test_pool_recovers_again_after_a_second_crash():
    events = Events()
    async with await watched_pool(events) as pool:
        for round_ in (1, 2):
            ref = await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.RandomSubPool())
            os.kill((await ref.where())[1], signal.SIGKILL)
            await events.wait(down=round_, recovered=round_)
        ref = await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.RandomSubPool())
        assert await ref.get_tag() is None


async def test_process_down_reports_the_exit_code_and_reaps_the_process():
    events = Events()
    async with await watched_pool(events) as pool:
        killed = []
        for round_ in (1, 2, 3, 4):
            ref = await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.ProcessIndex(1))
            killed.append((await ref.where())[1])
            os.kill(killed[-1], signal.SIGKILL)
            await events.wait(down=round_, recovered=round_)
        assert [code for _, code in events.down] == [-signal.SIGKILL] * 4
        assert not any(psutil.pid_exists(pid) for pid in killed)  # reaped, not zombies


async def test_without_auto_recover_a_killed_sub_pool_stays_down():
    events = Events()
    async with await watched_pool(events, auto_recover=False) as pool:
        ref = await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.ProcessIndex(1))
        pid = (await ref.where())[1]
        os.kill(pid, signal.SIGKILL)
        await events.wait(down=1, recovered=0)
        await asyncio.sleep(0.5)
        assert events.recovered == []
        assert not running(pid) and not live_children()
        with pytest.raises(mo.NoMatchingPool):
            await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.RandomSubPool())
        with pytest.raises(mo.ServerClosed):
            await asyncio.wait_for(ref.where(), 5)


async def test_stop_is_prompt_and_leaves_no_process():
    pool = await mo.create_actor_pool("127.0.0.1", n_process=2)
    pids = [s.pid for s in pool.sub_pools]
    assert all(running(pid) for pid in pids)
    started = time.monotonic()
    await pool.stop()
    assert time.monotonic() - started < PROMPT
    assert not any(running(pid) for pid in pids)
    assert not any(p.pid in pids for p in psutil.Process().children())  # reaped too


destroy_log: list[str] = []


class DestroyLog(mo.Actor):
    def record(self, entry: str) -> None:
        destroy_log.append(entry)


class Reporter(mo.Actor):
    def __init__(self, log: mo.ActorRef) -> None:
        self.log = log

    async def __pre_destroy__(self) -> None:
        await self.log.record(f"pre_destroy of {self.uid}")


async def test_stop_runs_pre_destroy_of_sub_pool_actors():
    destroy_log.clear()
    async with await mo.create_actor_pool("127.0.0.1", n_process=1) as pool:
        log = await mo.create_actor(DestroyLog, address=pool.address)
        in_sub = mo.ProcessIndex(1)
        await mo.create_actor(Reporter, log, uid="reporter", address=pool.address, allocate_strategy=in_sub)
    assert destroy_log == ["pre_destroy of reporter"]


async def test_sub_pools_exit_when_their_main_pool_process_dies():
    handle = await mo.create_actor_pool("127.0.0.1", n_process=1, own_process=True)
    ref = await mo.create_actor(Info, address=handle.address, allocate_strategy=mo.ProcessIndex(1))
    sub_pid = (await ref.where())[1]
    os.kill(handle.pid, signal.SIGKILL)
    await asyncio.to_thread(handle.process.join, 5)
    try:
        await eventually(lambda: asyncio.sleep(0, running(sub_pid)), lambda alive: not alive, timeout=5)
    finally:
        if running(sub_pid):  # not our child: clean up before failing
            psutil.Process(sub_pid).kill()
