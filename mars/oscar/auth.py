"""Shared-secret tokens between pools.

Messages between pools are pickles, and unpickling runs code: anyone who can
reach a pool's port could run code in it. A pool started with a token
unpickles nothing from a connection until the connection has shown that
token (an ``AUTH`` frame of raw bytes, compared in constant time). A process
holds one token, used on every connection it opens: the cluster's. It comes
from ``MARS_TOKEN`` or :func:`set_token`, and a pool started with a token
sets it for its own process and its sub pools.
"""

from __future__ import annotations

import hmac
import os

_token: str | None = os.environ.get("MARS_TOKEN") or None


def set_token(token: str | None) -> None:
    """Use ``token`` on the connections this process opens (None: no token)."""
    global _token
    if token is not None and (not isinstance(token, str) or not token):
        raise ValueError(f"token must be a non-empty string, got {token!r}")
    _token = token


def get_token() -> str | None:
    """The token this process shows to the pools it connects to."""
    return _token


def token_matches(expected: str, offered: bytes | bytearray | memoryview) -> bool:
    return hmac.compare_digest(expected.encode(), bytes(offered))
