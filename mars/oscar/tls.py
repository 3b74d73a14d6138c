"""TLS for actor connections between hosts.

Within a host, pools talk over Unix sockets, which need no encryption. Over
TCP, a cluster started with a certificate serves TLS, so a token sent across
hosts cannot be read off the network. Like the token (:mod:`.auth`), a
process holds one :class:`TLSConfig`, used by its servers and by every TCP
connection it opens; a pool started with one sets it for its own process and
its sub pools. A client that only connects needs the CA alone (``MARS_TLS_CA``).
"""

from __future__ import annotations

import functools
import os
import ssl
from dataclasses import dataclass


@dataclass(frozen=True)
class TLSConfig:
    """Paths of a PEM certificate (with its ``key``) to serve with, and of the ``ca`` that signed the peers'.

    Without ``ca``, peers are checked against the system's trusted roots.
    Peers' certificates must name the host connected to (a DNS name or an IP
    address in their subjectAltName).
    """

    cert: str | None = None
    key: str | None = None
    ca: str | None = None

    def __post_init__(self) -> None:
        if self.key is not None and self.cert is None:
            raise ValueError(f"a TLS key needs its certificate: got key={self.key!r} and no cert")
        for what, path in (("cert", self.cert), ("key", self.key), ("ca", self.ca)):
            if path is not None and not os.path.isfile(path):
                raise ValueError(f"TLS {what} file {path!r} does not exist")

    @property
    def serves(self) -> bool:
        return self.cert is not None

    def server_context(self) -> ssl.SSLContext:
        """The context a server with this certificate listens with."""
        if self.cert is None:
            raise ValueError("a TLS server needs a certificate (tls_cert)")
        return _server_context(self.cert, self.key, self.ca)

    def client_context(self) -> ssl.SSLContext:
        """The context a connection to a TLS server is opened with: it checks the server's certificate."""
        return _client_context(self.ca)


@functools.lru_cache(maxsize=8)
def _server_context(cert: str, key: str | None, ca: str | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert, key)
    return ctx


@functools.lru_cache(maxsize=8)
def _client_context(ca: str | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


#: names the CA file (PEM) a process that was given no TLS settings checks servers against
TLS_CA_ENV = "MARS_TLS_CA"


def _from_env() -> TLSConfig | None:
    ca = os.environ.get(TLS_CA_ENV) or None
    if ca is None:
        return None
    if not os.path.isfile(ca):
        raise ValueError(f"${TLS_CA_ENV} must name a PEM file of CA certificates, got {ca!r}: no such file")
    return TLSConfig(ca=ca)


_tls: TLSConfig | None = None


def set_tls(config: TLSConfig | None) -> None:
    """Use ``config`` for this process's TLS connections (None: back to ``$MARS_TLS_CA``, if set, else plain TCP)."""
    global _tls
    if config is not None and not isinstance(config, TLSConfig):
        raise TypeError(f"config must be a TLSConfig or None, got {config!r}")
    _tls = config


def get_tls() -> TLSConfig | None:
    """The TLS settings of this process's connections: set by :func:`set_tls`, else from ``$MARS_TLS_CA``."""
    return _tls if _tls is not None else _from_env()


def client_context() -> ssl.SSLContext | None:
    """The context this process's TLS connections open with (TCP between pools, https to the web service);
    None: plain TCP, and the system's trusted roots for https."""
    tls = get_tls()
    return tls.client_context() if tls is not None else None
