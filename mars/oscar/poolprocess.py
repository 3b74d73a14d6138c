"""A main pool, with its sub pools, in a process of its own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import sys
from typing import Any

from .context import get_context
from .errors import PoolStartError
from .loop import new_event_loop
from .mainpool import MainActorPool, _join_or_kill, _kill, _wait_ready
from .message import StopPoolMessage
from .subpool import watch_parent


class PoolProcess:
    """Handle on a main pool running in a child process.

    ``address`` is the main pool's address and ``sub_addresses`` its sub
    pools'; ``await stop()`` stops them all. Works as an async context manager.
    """

    def __init__(self, process: Any, address: str, sub_addresses: list[str]) -> None:
        self.process = process
        self.address = address
        self.external_address = address
        self.sub_addresses = sub_addresses

    @property
    def pid(self) -> int:
        return self.process.pid

    async def stop(self, timeout: float = 10.0) -> None:
        if self.process.is_alive():
            with contextlib.suppress(Exception):
                await get_context().request(self.address, StopPoolMessage(), timeout=timeout)
        await asyncio.get_running_loop().run_in_executor(None, _join_or_kill, self.process, timeout)

    async def __aenter__(self) -> PoolProcess:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    def __repr__(self) -> str:
        return f"PoolProcess(address={self.address!r}, pid={self.pid}, sub_addresses={self.sub_addresses!r})"


async def start_pool_process(pool_kwargs: dict[str, Any], timeout: float = 120.0) -> PoolProcess:
    """Spawn a process running ``MainActorPool(**pool_kwargs)``; returns once it serves."""
    for key in ("on_process_down", "on_process_recover"):
        if pool_kwargs.get(key) is not None:
            raise ValueError(f"{key} cannot be used with a pool in its own process: it runs in that process")
    mp = multiprocessing.get_context(pool_kwargs.get("start_method", "spawn"))
    receiver, sender = mp.Pipe(duplex=False)
    process = mp.Process(target=run_main_pool, args=(pool_kwargs, os.getpid(), sender), daemon=False)
    process.start()
    sender.close()
    loop = asyncio.get_running_loop()
    try:
        status, info = await loop.run_in_executor(None, _wait_ready, receiver, process, timeout)
    finally:
        receiver.close()
    if status != "ok":
        _kill(process)
        raise PoolStartError(f"main pool process failed to start: {info}")
    address, sub_addresses = info
    return PoolProcess(process, address, sub_addresses)


def run_main_pool(pool_kwargs: dict[str, Any], parent_pid: int, ready: Any) -> None:
    """Entry point of the main pool's own process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us
    loop = new_event_loop(pool_kwargs.get("use_uvloop", False))
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(_serve(pool_kwargs, parent_pid, ready))
    finally:
        loop.close()
    sys.exit(0)


async def _serve(pool_kwargs: dict[str, Any], parent_pid: int, ready: Any) -> None:
    try:
        pool = await MainActorPool(**pool_kwargs).start()
    except BaseException as e:
        ready.send(("error", f"{type(e).__name__}: {e}"))
        ready.close()
        return
    ready.send(("ok", (pool.address, [s.address for s in pool.sub_pools])))
    ready.close()
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task] = []
    loop.add_signal_handler(signal.SIGTERM, lambda: stopping.append(loop.create_task(pool.stop())))
    watcher = loop.create_task(watch_parent(parent_pid, pool))
    await pool.wait_stopped()
    watcher.cancel()
    logging.getLogger(__name__).debug("main pool %s stopped", pool.address)
