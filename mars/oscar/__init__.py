"""mars.oscar: an asyncio actor framework.

Pools of actors run in a main process and its sub pool processes; actors are
called through :class:`ActorRef` over TCP between hosts, Unix sockets between
processes of one host, and direct calls within a process. This package
imports nothing from the rest of ``mars`` except :mod:`mars.serialization`.
"""

from __future__ import annotations

from .actor import Actor, extensible, no_lock
from .allocate import (
    AllocateStrategy,
    IdleLabel,
    LeastLoaded,
    MainPool,
    ProcessIndex,
    RandomLabel,
    RandomSubPool,
)
from .auth import get_token, set_token
from .api import actor_ref, create_actor, create_actor_pool, destroy_actor, has_actor
from .context import close_connections
from .errors import (
    ActorAlreadyExist,
    ActorNotExist,
    AuthenticationError,
    NoMatchingPool,
    OscarError,
    PoolStartError,
    RemoteError,
    ServerClosed,
)
from .loop import new_event_loop, run
from .mainpool import MainActorPool
from .pool import ActorPool
from .poolprocess import PoolProcess
from .ref import ActorRef
from .tls import TLSConfig, get_tls, set_tls

__all__ = [
    "Actor",
    "ActorAlreadyExist",
    "ActorNotExist",
    "ActorPool",
    "ActorRef",
    "AllocateStrategy",
    "AuthenticationError",
    "IdleLabel",
    "LeastLoaded",
    "MainActorPool",
    "MainPool",
    "NoMatchingPool",
    "OscarError",
    "PoolProcess",
    "PoolStartError",
    "ProcessIndex",
    "RandomLabel",
    "RandomSubPool",
    "RemoteError",
    "ServerClosed",
    "TLSConfig",
    "actor_ref",
    "close_connections",
    "create_actor",
    "create_actor_pool",
    "destroy_actor",
    "extensible",
    "get_tls",
    "get_token",
    "has_actor",
    "new_event_loop",
    "no_lock",
    "run",
    "set_tls",
    "set_token",
]
