"""The functions users call: pools, and actors in them."""

from __future__ import annotations

from typing import Any

from .allocate import AllocateStrategy
from .context import get_context, local_pool
from .errors import ActorNotExist
from .auth import set_token
from .tls import TLSConfig, set_tls
from .loop import resolve_uvloop
from .mainpool import MainActorPool, ProcessCallback
from .poolprocess import PoolProcess, start_pool_process
from .message import CreateActorMessage, DestroyActorMessage, HasActorMessage
from .ref import ActorRef


async def create_actor_pool(
    address: str = "127.0.0.1:0",
    n_process: int = 0,
    labels: list[str] | None = None,
    envs: list[dict[str, str]] | None = None,
    auto_recover: bool = True,
    use_uvloop: bool | str = "auto",
    on_process_down: ProcessCallback | None = None,
    on_process_recover: ProcessCallback | None = None,
    start_method: str = "spawn",
    own_process: bool = False,
    token: str | None = None,
    tls: TLSConfig | None = None,
) -> MainActorPool | PoolProcess:
    """Start a main pool in this process and ``n_process`` sub pool processes.

    Parameters
    ----------
    address
        ``host:port`` to listen on (port 0, or no port, picks a free one); the
        sub pools listen on other ports of the same host.
    labels
        One label per sub pool, or one for the main pool followed by one per
        sub pool (e.g. ``["main", "cpu-0", "cpu-1", "io-0"]``).
    envs
        Environment variables for each sub pool process.
    auto_recover
        Restart a sub pool that dies; ``on_process_down(address, exitcode)``
        and ``on_process_recover(address)`` are told either way.
    use_uvloop
        Run the sub pools on uvloop: ``"auto"`` when it is installed.
    own_process
        Run the main pool in a process of its own too; returns a
        :class:`PoolProcess` handle (``address``, ``sub_addresses``, ``stop()``).
    token
        Refuse connections that do not show this token (see
        :mod:`mars.oscar.auth`); this process and the sub pools use it too.
    tls
        Serve TCP with this certificate and reach other pools over TLS (see
        :mod:`mars.oscar.tls`); Unix sockets within the host stay plain.

    Examples
    --------
    >>> import asyncio
    >>> async def main():
    ...     async with await create_actor_pool("127.0.0.1", n_process=0) as pool:
    ...         return pool.address.startswith("127.0.0.1:")
    >>> asyncio.run(main())
    True
    """
    if ":" not in address.rsplit("]", 1)[-1]:
        address += ":0"
    kwargs: dict[str, Any] = dict(
        address=address,
        n_process=n_process,
        labels=labels,
        envs=envs,
        auto_recover=auto_recover,
        use_uvloop=resolve_uvloop(use_uvloop),
        on_process_down=on_process_down,
        on_process_recover=on_process_recover,
        start_method=start_method,
        token=token,
        tls=tls,
    )
    if own_process:
        if token is not None:
            set_token(token)  # to talk to the pool we start
        if tls is not None:
            set_tls(tls)
        return await start_pool_process(kwargs)
    return await MainActorPool(**kwargs).start()


async def create_actor(
    actor_cls: type,
    *args: Any,
    uid: str | None = None,
    address: str,
    allocate_strategy: AllocateStrategy | None = None,
    **kwargs: Any,
) -> ActorRef:
    """Create an actor in the pool at ``address``; returns its :class:`ActorRef`.

    ``allocate_strategy`` (see :mod:`mars.oscar.allocate`) picks a sub pool when
    ``address`` is a main pool's; by default the actor lives in that pool itself.
    """
    if allocate_strategy is not None and not isinstance(allocate_strategy, AllocateStrategy):
        raise TypeError(f"allocate_strategy must be an AllocateStrategy, got {allocate_strategy!r}")
    pool = local_pool(address)
    if pool is not None:
        return await pool.create_actor(actor_cls, args, kwargs, uid, allocate_strategy)
    message = CreateActorMessage(actor_cls, args, kwargs, uid, allocate_strategy)
    return await get_context().request(address, message)


async def destroy_actor(ref: ActorRef) -> None:
    """Destroy the actor ``ref`` points at (its ``__pre_destroy__`` runs first)."""
    pool = local_pool(ref.address)
    if pool is not None:
        await pool.destroy_actor(ref.uid)
        return
    await get_context().request(ref.address, DestroyActorMessage(ref.uid))


async def has_actor(ref: ActorRef) -> bool:
    """Whether the actor ``ref`` points at exists."""
    pool = local_pool(ref.address)
    if pool is not None:
        return pool.has_actor(ref.uid)
    return await get_context().request(ref.address, HasActorMessage(ref.uid))


async def actor_ref(address: str, uid: str) -> ActorRef:
    """A reference to an existing actor; raises :class:`ActorNotExist` if there is none."""
    ref = ActorRef(address, uid)
    if not await has_actor(ref):
        raise ActorNotExist(f"no actor {uid!r} in pool {address}")
    return ref
