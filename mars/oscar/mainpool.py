"""The main pool: actors of its own, plus sub pool processes it starts, places
actors in, watches, and restarts when they crash."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import multiprocessing
import os
import random
import signal
import uuid
from typing import Any, Callable, Iterator

from .allocate import IdleLabel, LeastLoaded, MainPool, ProcessIndex, RandomLabel, RandomSubPool
from .context import get_context, local_pool
from .errors import NoMatchingPool, PoolStartError
from .message import CreateActorMessage, StopPoolMessage
from .pool import ActorPool
from .ref import ActorRef
from .subpool import SubPoolConfig, run_sub_pool
from .tls import TLSConfig
from .transport import split_address

logger = logging.getLogger(__name__)

#: exit codes of ended sub pool processes kept for wait_exit
_KEPT_EXITS = 64

ProcessCallback = Callable[..., Any]


class SubPool:
    """The main pool's record of one sub pool process."""

    def __init__(self, config: SubPoolConfig) -> None:
        self.config = config
        self.process: multiprocessing.process.BaseProcess | None = None
        self.actors: dict[str, str | None] = {}  # uid -> IdleLabel mark
        self.alive = False
        self.restarts = 0

    @property
    def address(self) -> str:
        return self.config.address

    @property
    def label(self) -> str:
        return self.config.label

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None


class MainActorPool(ActorPool):
    """A pool in this process that owns ``n_process`` sub pool processes."""

    def __init__(
        self,
        address: str,
        n_process: int = 0,
        labels: list[str] | None = None,
        envs: list[dict[str, str]] | None = None,
        auto_recover: bool = True,
        use_uvloop: bool = False,
        on_process_down: ProcessCallback | None = None,
        on_process_recover: ProcessCallback | None = None,
        start_method: str = "spawn",
        start_timeout: float = 60.0,
        token: str | None = None,
        tls: TLSConfig | None = None,
    ) -> None:
        main_label, sub_labels = _split_labels(n_process, labels)
        super().__init__(address, label=main_label, token=token, tls=tls)
        if envs is not None and len(envs) != n_process:
            raise ValueError(f"envs must give one dict per sub pool ({n_process}), got {len(envs)}")
        self.auto_recover = auto_recover
        self.on_process_down = on_process_down
        self.on_process_recover = on_process_recover
        self._use_uvloop = use_uvloop
        self._mp: Any = multiprocessing.get_context(start_method)
        self._start_timeout = start_timeout
        self._stopping = False
        self._sub_envs = envs or [{} for _ in range(n_process)]
        self._sub_labels = sub_labels
        self.sub_pools: list[SubPool] = []
        #: exit codes of sub pool processes that ended, by pid (the latest _KEPT_EXITS)
        self._exits: dict[int, asyncio.Future] = {}

    async def start(self) -> MainActorPool:
        await super().start()
        host, _ = split_address(self.address)
        host_port0 = f"[{host}]:0" if ":" in host else f"{host}:0"
        level = logging.getLogger("mars").getEffectiveLevel()
        for i, (label, env) in enumerate(zip(self._sub_labels, self._sub_envs), 1):
            config = SubPoolConfig(
                i, label, host_port0, self.address, os.getpid(), dict(env), self._use_uvloop, level, self.token,
                self.tls,
            )
            self.sub_pools.append(SubPool(config))
        try:
            await asyncio.gather(*(self._start_sub(sub) for sub in self.sub_pools))
        except BaseException:
            await self.stop()
            raise
        return self

    @property
    def external_address(self) -> str:
        return self.address

    # -- sub pool processes ---------------------------------------------------
    async def _start_sub(self, sub: SubPool) -> None:
        receiver, sender = self._mp.Pipe(duplex=False)
        process = self._mp.Process(
            target=run_sub_pool, args=(sub.config, sender), daemon=True, name=f"mars-subpool-{sub.label}"
        )
        with _environment(sub.config.env):
            process.start()
        sender.close()
        _own_group(process.pid)
        sub.process = process
        loop = asyncio.get_running_loop()
        try:
            status, info = await loop.run_in_executor(None, _wait_ready, receiver, process, self._start_timeout)
        finally:
            receiver.close()
        if status != "ok":
            _kill(process)
            raise PoolStartError(f"sub pool {sub.label!r} (#{sub.config.index}) failed to start: {info}")
        sub.config.address = info
        sub.alive = True
        loop.add_reader(process.sentinel, self._on_sub_exit, sub, process)

    def _on_sub_exit(self, sub: SubPool, process: Any) -> None:
        """Runs when the sub pool's process sentinel becomes readable: it exited."""
        asyncio.get_running_loop().remove_reader(process.sentinel)
        if self._stopping or sub.process is not process:
            return
        sub.alive = False
        self._spawn(self._recover(sub, process))

    async def _recover(self, sub: SubPool, process: Any) -> None:
        # the sentinel can fire a moment before the child is waitable: join, off the loop
        await asyncio.get_running_loop().run_in_executor(None, process.join, 5)
        exitcode: int | None = process.exitcode
        logger.warning("sub pool %s (%s, pid %s) exited with code %s", sub.address, sub.label, sub.pid, exitcode)
        _kill_group(process.pid)  # what its code started goes with it
        self._record_exit(process.pid, exitcode)
        sub.actors.clear()
        await _notify(self.on_process_down, sub.address, exitcode)
        if not self.auto_recover or self._stopping:
            return
        try:
            await self._start_sub(sub)
        except Exception:
            logger.exception("cannot restart sub pool %s", sub.address)
            return
        sub.restarts += 1
        logger.warning("sub pool %s (%s) restarted as pid %s", sub.address, sub.label, sub.pid)
        await _notify(self.on_process_recover, sub.address)

    async def stop(self) -> None:
        self._stopping = True
        await asyncio.gather(*(self._stop_sub(sub) for sub in self.sub_pools), return_exceptions=True)
        await super().stop()

    async def _stop_sub(self, sub: SubPool) -> None:
        process = sub.process
        if process is None:
            return
        loop = asyncio.get_running_loop()
        with contextlib.suppress(Exception):
            loop.remove_reader(process.sentinel)
        if process.is_alive():
            with contextlib.suppress(Exception):
                await get_context().request(sub.address, StopPoolMessage(), timeout=5)
        await loop.run_in_executor(None, _join_or_kill, process, 5.0)
        _kill_group(process.pid)
        sub.alive = False

    async def wait_exit(self, pid: int, timeout: float) -> int | None:
        """The exit code of sub pool process ``pid`` (negative: the signal that ended it) once this pool
        has seen it end; None when it has not within ``timeout`` seconds.

        A caller whose connection to a sub pool closed learns here why: the
        close can come a moment before the pool sees the process end.
        """
        try:
            return await asyncio.wait_for(asyncio.shield(self._exit_future(pid)), timeout)
        except asyncio.TimeoutError:
            return None

    def _exit_future(self, pid: int) -> asyncio.Future:
        """The future of process ``pid``'s exit code; a done one of an earlier process with this pid is replaced."""
        future = self._exits.get(pid)
        if future is None or (future.done() and any(s.alive and s.pid == pid for s in self.sub_pools)):
            future = self._new_exit(pid)
        return future

    def _record_exit(self, pid: int | None, exitcode: int | None) -> None:
        if pid is None:
            return
        future = self._exits.get(pid)
        if future is None or future.done():
            future = self._new_exit(pid)
        future.set_result(exitcode)

    def _new_exit(self, pid: int) -> asyncio.Future:
        future = self._exits[pid] = asyncio.get_running_loop().create_future()
        while len(self._exits) > _KEPT_EXITS:
            self._exits.pop(next(iter(self._exits)))
        return future

    # -- placing actors -------------------------------------------------------
    async def create_actor(
        self, actor_cls: type, args: tuple, kwargs: dict, uid: str | None, strategy: Any = None
    ) -> ActorRef:
        sub = self._choose(strategy)
        if sub is None:
            return await super().create_actor(actor_cls, args, kwargs, uid, None)
        uid = uid or f"{getattr(actor_cls, '__name__', 'actor')}-{uuid.uuid4().hex[:16]}"
        recorded = uid not in sub.actors  # else the create fails: keep the live actor's record
        if recorded:  # before the await, so concurrent IdleLabel creates see the mark
            sub.actors[uid] = strategy.mark if isinstance(strategy, IdleLabel) else None
        try:
            message = CreateActorMessage(actor_cls, args, kwargs, uid, None)
            return await get_context().request(sub.address, message)
        except BaseException:
            if recorded:
                sub.actors.pop(uid, None)
            raise

    def _choose(self, strategy: Any) -> SubPool | None:
        """The sub pool ``strategy`` selects, or None for this process."""
        if strategy is None or isinstance(strategy, MainPool):
            return None
        alive = [s for s in self.sub_pools if s.alive]
        if isinstance(strategy, ProcessIndex):
            if strategy.index == 0:
                return None
            if not 1 <= strategy.index <= len(self.sub_pools):
                raise NoMatchingPool(f"process index {strategy.index} out of range 0..{len(self.sub_pools)}")
            candidates = [self.sub_pools[strategy.index - 1]]
        elif isinstance(strategy, RandomSubPool):
            candidates = alive
        elif isinstance(strategy, (RandomLabel, IdleLabel)):
            candidates = [s for s in alive if s.label == strategy.label]
        elif isinstance(strategy, LeastLoaded):
            candidates = [s for s in alive if strategy.label in (None, s.label)]
            candidates = sorted(candidates, key=lambda s: len(s.actors))[:1]
        else:
            raise TypeError(f"unknown allocate strategy {strategy!r}")
        if isinstance(strategy, IdleLabel):
            candidates = [s for s in candidates if strategy.mark not in s.actors.values()]
        if not candidates:
            labels = sorted({s.label for s in self.sub_pools})
            raise NoMatchingPool(f"no sub pool matches {strategy!r} in pool {self.address} (labels: {labels})")
        return random.choice(candidates)

    def actor_destroyed(self, uid: str) -> None:
        for sub in self.sub_pools:
            sub.actors.pop(uid, None)


async def sub_pool_exit(main_address: str, pid: int, timeout: float) -> int | None:
    """The exit code of process ``pid``, a sub pool of the main pool at ``main_address`` in this process,
    once that pool has seen it end (see :meth:`MainActorPool.wait_exit`); None when there is no such main
    pool here, or the process did not end within ``timeout`` seconds."""
    pool = local_pool(main_address)
    if not isinstance(pool, MainActorPool):
        return None
    return await pool.wait_exit(pid, timeout)


def _split_labels(n_process: int, labels: list[str] | None) -> tuple[str, list[str]]:
    if n_process < 0:
        raise ValueError(f"n_process must be >= 0, got {n_process}")
    if labels is None:
        return "main", [f"sub-{i}" for i in range(n_process)]
    labels = list(labels)
    if len(labels) == n_process + 1:
        return labels[0], labels[1:]
    if len(labels) == n_process:
        return "main", labels
    raise ValueError(
        f"labels must name the main pool and {n_process} sub pools ({n_process + 1} labels), got {labels!r}"
    )


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """Set ``env`` while a child process is spawned (it inherits os.environ)."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _wait_ready(receiver: Any, process: Any, timeout: float) -> tuple[str, Any]:
    if not receiver.poll(timeout):
        return "error", f"not ready after {timeout:g} s"
    try:
        return receiver.recv()
    except EOFError:
        process.join(5)
        return "error", f"process exited with code {process.exitcode} before it was ready"


def _join_or_kill(process: Any, timeout: float) -> None:
    process.join(timeout)
    if process.is_alive():
        _kill(process)


def _own_group(pid: int | None) -> None:
    """Make ``pid`` lead a process group of its own (the sub pool does the same as it starts: whichever
    comes first), so that the processes its code starts can be killed with it."""
    with contextlib.suppress(OSError):  # it did so already (EACCES after exec), or is gone
        os.setpgid(pid, pid)  # type: ignore[arg-type]


def _kill_group(pid: int | None) -> None:
    """Kill what is left of the process group led by the ended sub pool ``pid`` (processes that chunk
    functions started); the group id is not reused while any member lives."""
    if pid is None:
        return
    with contextlib.suppress(OSError):  # no such group: it started nothing, or all of it ended
        os.killpg(pid, signal.SIGKILL)


def _kill(process: Any) -> None:
    with contextlib.suppress(Exception):
        process.kill()
        process.join(5)


async def _notify(callback: ProcessCallback | None, *args: Any) -> None:
    if callback is None:
        return
    try:
        result = callback(*args)
        if inspect.isawaitable(result):
            await result
    except Exception:
        logger.exception("process callback %r failed", callback)
