"""Where the processes of one OS user on one host find a cluster's token.

A supervisor makes a token for its cluster and writes it into a private
runtime directory (mode 0700, owned by its user), one file per port it
serves: ``port-<port>.json``. A worker, ``mars-web`` or client started by
the same user on the same host with only the supervisor's address finds the
token there, so the commands typed for a single machine work as they are
while other users of the host, and web pages, get nothing.

The directory is ``$MARS_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/mars``,
else ``~/.mars/runtime``.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import logging
import os
import socket
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)


def runtime_dir() -> Path:
    """The directory token files live in (not created here)."""
    if os.environ.get("MARS_RUNTIME_DIR"):
        return Path(os.environ["MARS_RUNTIME_DIR"])
    if os.environ.get("XDG_RUNTIME_DIR"):
        return Path(os.environ["XDG_RUNTIME_DIR"]) / "mars"
    return Path.home() / ".mars" / "runtime"


def _private_dir() -> Path:
    """The runtime directory, made if missing; refused unless this user owns it, then kept at 0700."""
    path = runtime_dir()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid != os.geteuid():
        raise PermissionError(f"the mars runtime directory {path} belongs to another user (uid {info.st_uid}): "
                              "set MARS_RUNTIME_DIR to a directory of your own")
    if stat.S_IMODE(info.st_mode) != 0o700:
        path.chmod(0o700)
    return path


def _split(address: str) -> tuple[str, int] | None:
    """(host, port) of ``host:port`` or ``http(s)://host:port/...``; None when there is no port."""
    parts = urlsplit(address if "://" in address else f"//{address}")
    try:
        port = parts.port
    except ValueError:
        return None
    if port is None or parts.hostname is None:
        return None
    return parts.hostname, port


class TokenFiles:
    """The token files a serving process wrote; :meth:`remove` takes them away when it stops."""

    def __init__(self, paths: list[Path]):
        self.paths = paths

    def __add__(self, other: TokenFiles) -> TokenFiles:
        return TokenFiles(self.paths + other.paths)

    def remove(self) -> None:
        for path in self.paths:
            with contextlib.suppress(OSError, ValueError):
                if json.loads(path.read_text()).get("pid") == os.getpid():  # not a successor's on the port
                    path.unlink()
        self.paths = []


def write_token_files(addresses: Iterable[str], token: str, keep: bool = False) -> TokenFiles:
    """Leave ``token`` where this user's processes on this host find it by any of ``addresses``.

    The files returned are those to remove when the process stops; with
    ``keep``, none: they stay (ignored by :func:`find_token` once their
    writer has stopped) for :func:`previous_token`. A failure to write is
    logged, not raised: across hosts, tokens travel by ``MARS_TOKEN`` or
    ``--token-file`` anyway.
    """
    ports = sorted({hp[1] for hp in map(_split, addresses) if hp is not None})
    try:
        folder = _private_dir()
    except OSError as e:
        logger.warning("cannot keep the cluster's token for local workers and clients: %s", e)
        return TokenFiles([])
    _prune(folder)
    body = json.dumps({"token": token, "pid": os.getpid(), "addresses": sorted(addresses)})
    paths = []
    for port in ports:
        path = folder / f"port-{port}.json"
        tmp = folder / f".port-{port}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(body)
        os.replace(tmp, path)
        paths.append(path)
    return TokenFiles([] if keep else paths)


#: a file whose writer stopped this long ago is no longer kept for a restart on its port
STALE_SECONDS = 24 * 3600


def _prune(folder: Path) -> None:
    """Remove files whose writers stopped more than :data:`STALE_SECONDS` ago (killed supervisors leave theirs)."""
    cutoff = time.time() - STALE_SECONDS
    for path in folder.iterdir():
        with contextlib.suppress(OSError, ValueError):
            if path.stat().st_mtime < cutoff and not _running(json.loads(path.read_text()).get("pid")):
                path.unlink()


def previous_token(port: int) -> str | None:
    """The token last left for ``port`` by this user on this host, whether or not its writer still runs.

    A supervisor restarted on its port takes it again, so that the workers
    that outlived it, which hold that token, can join it again.
    """
    return _read(runtime_dir() / f"port-{port}.json", live=False)


def shared_token(key: str, token: str) -> tuple[str, TokenFiles]:
    """The token of the first process of this user on this host to claim ``key``; ``token`` if that is us.

    Supervisors of one cluster started together on one host claim the sorted
    list of their addresses, so that they agree on one token. The claim is
    an exclusive link of a complete file, so two processes cannot both win;
    a claim whose writer has stopped is taken over.
    """
    folder = _private_dir()
    path = folder / f"cluster-{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    for _ in range(3):
        tmp = folder / f".claim-{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps({"token": token, "pid": os.getpid(), "key": key}))
        try:
            os.link(tmp, path)
            return token, TokenFiles([path])
        except FileExistsError:
            found = _read(path)
            if found is not None:
                return found, TokenFiles([])
            with contextlib.suppress(OSError):
                path.unlink()  # its writer is gone: claim it anew
        finally:
            tmp.unlink()
    raise OSError(f"cannot claim a token file at {path}")


def _read(path: Path, live: bool = True) -> str | None:
    """The token in a file of this user (``live``: whose writer still runs)."""
    try:
        if path.stat().st_uid != os.geteuid():
            return None
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or (live and not _running(record.get("pid"))):
        return None
    token = record.get("token")
    return token if isinstance(token, str) and token else None


def find_token(address: str) -> str | None:
    """The token a process of this user on this host left for ``address``, if any.

    ``address`` is ``host:port`` or a URL; only hosts that name this machine
    are looked up. A file whose writer is no longer running is ignored.
    """
    split = _split(address)
    if split is None or not is_this_host(split[0]):
        return None
    return _read(runtime_dir() / f"port-{split[1]}.json")


def _running(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_this_host(host: str) -> bool:
    """Whether ``host`` names this machine: loopback, an unspecified address, its name, or one of its addresses.

    Names are compared as written, never resolved (no DNS lookups).

    >>> is_this_host("127.0.0.1"), is_this_host("localhost"), is_this_host("192.0.2.1")
    (True, True, False)
    """
    host = host.strip("[]")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host.lower() in {"localhost", socket.gethostname().lower()}  # getfqdn() may wait on DNS
    return ip.is_loopback or ip.is_unspecified or host in _interface_addresses()


def _interface_addresses() -> set[str]:
    import psutil  # loaded by the nodes anyway; a client asks once

    return {a.address.split("%")[0] for addrs in psutil.net_if_addrs().values() for a in addrs}
