"""A sub pool process: started by its main pool, restarted by it after a crash."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

from .loop import new_event_loop
from .pool import ActorPool
from .tls import TLSConfig

logger = logging.getLogger(__name__)

_PARENT_POLL_SECONDS = 0.5


@dataclass
class SubPoolConfig:
    """What a sub pool process needs to start; picklable."""

    index: int  # 1..n; 0 is the main pool
    label: str
    address: str  # host:0 the first time, the bound address on a restart
    main_address: str
    main_pid: int
    env: dict[str, str] = field(default_factory=dict)
    use_uvloop: bool = False
    log_level: int = logging.WARNING
    token: str | None = None  # travels through the process's pipe, never on a command line
    tls: TLSConfig | None = None


def run_sub_pool(config: SubPoolConfig, ready: Any) -> None:
    """Entry point of the sub pool process (a multiprocessing target)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main pool stops us on Ctrl-C
    # a process group of our own: the main pool kills it whole when we end, with what our code started
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    logging.basicConfig(level=config.log_level)
    loop = new_event_loop(config.use_uvloop)
    asyncio.set_event_loop(loop)
    try:
        orphaned = loop.run_until_complete(_serve(config, ready))
    finally:
        loop.close()
    if orphaned:  # no main pool is left to kill our group once we end: we do it, ourselves last
        logging.shutdown()
        with contextlib.suppress(OSError):
            os.killpg(os.getpgrp(), signal.SIGKILL)
    sys.exit(0)


async def _serve(config: SubPoolConfig, ready: Any) -> bool:
    """Serve until stopped; returns whether the main pool's process was gone by then."""
    pool = ActorPool(config.address, label=config.label, main_address=config.main_address, token=config.token,
                     tls=config.tls)
    try:
        await pool.start()
    except BaseException as e:
        ready.send(("error", f"{type(e).__name__}: {e}"))
        ready.close()
        return False
    ready.send(("ok", pool.address))
    ready.close()
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task] = []
    loop.add_signal_handler(signal.SIGTERM, lambda: stopping.append(loop.create_task(pool.stop())))
    watcher = loop.create_task(watch_parent(config.main_pid, pool))
    await pool.wait_stopped()
    watcher.cancel()
    return os.getppid() != config.main_pid


async def watch_parent(parent_pid: int, pool: ActorPool) -> None:
    """Stop ``pool`` when the process that started it is gone, so none outlives it."""
    while os.getppid() == parent_pid:
        await asyncio.sleep(_PARENT_POLL_SECONDS)
    logger.warning("parent process %s is gone; pool %s stops", parent_pid, pool.address)
    await pool.stop()
