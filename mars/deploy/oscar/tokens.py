"""The cluster's token and TLS settings as a node starts: given, found on this host, or made.

Every cluster has a token, loopback included (see docs/security.md): a
supervisor given none makes one and leaves it where this user's workers,
``mars-web`` and clients on this host find it (:mod:`mars.oscar.tokenfile`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import secrets
import time

from ... import oscar as mo
from ...oscar import tokenfile

logger = logging.getLogger(__name__)

#: how long a worker or mars-web started beside its supervisor waits for the supervisor's token file
TOKEN_WAIT = 10.0


def _given_token(config: dict) -> str | None:
    """The token passed by flag or config, by ``--token-file``, or by ``MARS_TOKEN``, in that order."""
    security = config.get("security") or {}
    if security.get("token"):
        return str(security["token"])
    path = security.get("token_file")
    if path:
        try:
            token = open(path).read().strip()
        except OSError as e:
            raise ValueError(f"cannot read the token file {path!r}: {e.strerror or e}") from None
        if not token:
            raise ValueError(f"the token file {path!r} is empty")
        return token
    return os.environ.get("MARS_TOKEN") or None


def _insecure(config: dict, what: str) -> bool:
    if not (config.get("security") or {}).get("insecure"):
        return False
    logger.warning("%s runs WITHOUT a token (--insecure): any process or user that reaches its ports, and any web "
                   "page open in a browser on a host that reaches them, can run code as this user", what)
    return True


@dataclasses.dataclass
class ClusterToken:
    """A supervisor's token, whether it made it (rather than being given it), and the claim files it holds."""

    value: str | None
    made: bool = False
    claim: tokenfile.TokenFiles = dataclasses.field(default_factory=lambda: tokenfile.TokenFiles([]))


def supervisor_token(config: dict, port: int, peers: list[str]) -> ClusterToken:
    """The cluster's token: given, else the one this user's supervisor last had on ``port``, a peer's, or new.

    Every cluster has one, loopback included: anyone who reaches a pool or
    the web port could otherwise run code (messages carry pickles). None
    only with ``--insecure``. A supervisor restarted on its port keeps its
    token, so its workers can join it again; supervisors of one cluster
    (``-s``) started together on one host agree on the first one's.
    """
    given = _given_token(config)
    if given is not None or _insecure(config, "the supervisor"):
        return ClusterToken(given)
    found = (tokenfile.previous_token(port) if port else None) or next(
        filter(None, map(tokenfile.find_token, peers)), None)
    if found is not None:
        return ClusterToken(found, made=True)
    if len(peers) > 1 and any(tokenfile.is_this_host(p.rsplit(":", 1)[0]) for p in peers):
        try:
            token, claim = tokenfile.shared_token(",".join(sorted(peers)), secrets.token_urlsafe(32))
            return ClusterToken(token, True, claim)
        except OSError as e:
            logger.warning("cannot agree on a token with the other supervisors on this host: %s", e)
    return ClusterToken(secrets.token_urlsafe(32), made=True)


async def joining_token(config: dict, supervisors: list[str], what: str) -> str | None:
    """The token of the cluster a worker or mars-web joins: given, else found beside a supervisor on this host.

    A supervisor started at the same moment may not have written its file
    yet: the file is waited for a few seconds.
    """
    token = _given_token(config)
    if token is not None or _insecure(config, what):
        return token
    deadline = time.monotonic() + TOKEN_WAIT
    said = False
    while True:
        for address in supervisors:
            token = tokenfile.find_token(address)
            if token is not None:
                return token
        if time.monotonic() > deadline or not any(tokenfile.is_this_host(a.rsplit(":", 1)[0])
                                                  for a in supervisors):
            break
        if not said:
            logger.warning("%s waits for the supervisor at %s to start (up to %g s for its token)", what,
                           ", ".join(supervisors), TOKEN_WAIT)
            said = True
        await asyncio.sleep(0.2)
    raise ValueError(
        f"no token for the cluster at {', '.join(supervisors)}: a supervisor on this host started by this user "
        f"leaves it in {tokenfile.runtime_dir()}; otherwise pass the token its 'Mars Web started at "
        "...?token=...' line shows, with --token-file FILE or MARS_TOKEN (or --insecure when the supervisor has none)"
    )


def tls_config(config: dict) -> mo.TLSConfig | None:
    """The node's TLS settings (``--tls-cert``, ``--tls-key``, ``--tls-ca``), if any."""
    security = config.get("security") or {}
    cert, key, ca = (security.get(k) for k in ("tls_cert", "tls_key", "tls_ca"))
    if not (cert or key or ca):
        return None
    return mo.TLSConfig(cert=cert, key=key or None, ca=ca)
