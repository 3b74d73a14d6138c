"""Pools started with a token unpickle nothing until a connection shows it."""

from __future__ import annotations

import asyncio
import pathlib
import pickle
import socket
import struct

import psutil
import pytest

import mars.oscar as mo
from mars.oscar.transport import unix_path
from oscar_actors import Info, Node
from other_user import as_nobody, needs_another_user

TOKEN = "s3cret-token"


@pytest.fixture(autouse=True)
def reset_token():
    yield
    mo.set_token(None)
    mo.close_connections()


class Planted:
    """Unpickling this writes a file: the proof that a pool ran a stranger's pickle."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return pathlib.Path.touch, (pathlib.Path(self.path),)


async def test_callers_without_the_token_are_refused_with_a_clear_error():
    async with await mo.create_actor_pool("127.0.0.1", token=TOKEN) as pool:
        ref = await mo.create_actor(Info, "tagged", address=pool.address)
        over_tcp = mo.ActorRef("tcp://" + pool.address, ref.uid)
        assert mo.get_token() == TOKEN  # the pool's process speaks with its token
        assert await over_tcp.get_tag() == "tagged"
        for offered in (None, "wrong-token"):
            mo.close_connections()
            mo.set_token(offered)
            with pytest.raises(mo.AuthenticationError, match="requires a token|refused the token"):
                await asyncio.wait_for(over_tcp.get_tag(), 5)
        mo.close_connections()
        mo.set_token(TOKEN)
        assert await over_tcp.get_tag() == "tagged"


async def test_sub_pools_share_the_token_and_talk_to_each_other():
    async with await mo.create_actor_pool("127.0.0.1", n_process=2, token=TOKEN) as pool:
        a = await mo.create_actor(Node, address=pool.address, allocate_strategy=mo.ProcessIndex(1))
        b = await mo.create_actor(Node, address=pool.address, allocate_strategy=mo.ProcessIndex(2))
        trail = await asyncio.wait_for(a.bounce(b, 3), 10)  # sub -> sub -> sub calls
        assert len(trail) == 4
        await mo.destroy_actor(a)  # the sub pool's notice to the main pool is authenticated too
        assert not await mo.has_actor(a)


def _raw_frame(payload: bytes) -> bytes:
    return struct.pack("<BQIH", 1, 1, len(payload), 0) + payload


@pytest.mark.parametrize("transport", ["tcp", "unix"])
async def test_a_strangers_pickle_is_never_unpickled(tmp_path, transport):
    marker = tmp_path / "planted"
    async with await mo.create_actor_pool("127.0.0.1", token=TOKEN) as pool:
        if transport == "tcp":
            host, port = pool.address.rsplit(":", 1)
            sock = socket.create_connection((host, int(port)), timeout=5)
        else:
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(5)
            sock.connect(unix_path(pool.address))
        with sock:
            sock.sendall(_raw_frame(pickle.dumps(Planted(str(marker)))))
            reply = await asyncio.get_running_loop().run_in_executor(None, _read_until_closed, sock)
        assert not marker.exists()
        assert b"requires a token" in reply  # the refusal says why, then the pool hangs up
        # the pool still serves callers that show the token
        ref = await mo.create_actor(Info, 1, address=pool.address)
        assert await mo.ActorRef("tcp://" + pool.address, ref.uid).get_tag() == 1


def _read_until_closed(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


async def test_set_token_rejects_an_empty_token():
    with pytest.raises(ValueError, match="non-empty string"):
        mo.set_token("")


# -- as an attacker: what a connection without the token can make a pool do ------------------------------------

def _rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


def _send_until_blocked(sock: socket.socket, data: bytes, total: int) -> int:
    """Send ``total`` bytes of ``data`` repeated; stop at the first timeout or reset. Returns what left."""
    sent = 0
    try:
        while sent < total:
            sent += sock.send(data)
    except OSError:  # socket.timeout is an OSError too: the pool stopped reading
        pass
    return sent


async def test_bytes_before_the_token_are_neither_buffered_nor_read_far():
    """150 MiB sent by a stranger behind a frame announcing a 2 GiB header: the pool stays its size."""
    pool = await mo.create_actor_pool("127.0.0.1", token=TOKEN, own_process=True)
    try:
        before = _rss(pool.pid)
        host, port = pool.address.rsplit(":", 1)
        loop = asyncio.get_running_loop()
        socks = []
        for kind in (1, 6):  # a request first, then an AUTH frame announcing far more than a token
            sock = socket.create_connection((host, int(port)), timeout=2)
            socks.append(sock)
            prefix = struct.pack("<BQIH", kind, 1, 2**31, 0)
            await loop.run_in_executor(None, sock.sendall, prefix)
            sent = await loop.run_in_executor(None, _send_until_blocked, sock, bytes(1 << 20), 150 << 20)
            assert sent < 150 << 20  # the pool stopped reading long before
        grown = _rss(pool.pid) - before
        assert grown < 10 << 20, f"the pool grew by {grown >> 20} MiB on bytes sent without its token"
        for sock in socks:
            sock.settimeout(5)
            assert b"requires a token" in await loop.run_in_executor(None, _read_until_closed, sock)
            sock.close()
    finally:
        await pool.stop()


async def test_one_wrong_token_closes_the_connection_and_a_second_try_is_not_read(tmp_path):
    marker = tmp_path / "planted"
    async with await mo.create_actor_pool("127.0.0.1", token=TOKEN) as pool:
        host, port = pool.address.rsplit(":", 1)
        loop = asyncio.get_running_loop()
        sock = socket.create_connection((host, int(port)), timeout=5)
        with sock:
            wrong, right = b"guess-1", TOKEN.encode()
            sock.sendall(struct.pack("<BQIH", 6, 0, len(wrong), 0) + wrong
                         + struct.pack("<BQIH", 6, 0, len(right), 0) + right
                         + _raw_frame(pickle.dumps(Planted(str(marker)))))
            started = loop.time()
            reply = await loop.run_in_executor(None, _read_until_closed, sock)
        assert b"refused the token" in reply and loop.time() - started >= 0.3  # slow to guess
        assert not marker.exists()


_AS_NOBODY = """
import socket, struct, sys
sock = socket.socket(socket.AF_UNIX)
sock.settimeout(5)
try:
    sock.connect(sys.argv[1].replace("@", "\\0", 1))
    sock.sendall(bytes.fromhex(sys.argv[2]))
    print("reply:", sock.recv(4096))
except OSError as e:
    print("refused:", e)
"""


@needs_another_user
@pytest.mark.parametrize("token", [None, TOKEN], ids=["no-token", "token"])
async def test_another_os_user_cannot_use_the_pools_unix_socket(tmp_path, token):
    """Abstract Unix sockets have no file permissions: the pool checks the peer's uid itself."""
    marker = tmp_path / "planted"
    tmp_path.chmod(0o777)
    async with await mo.create_actor_pool("127.0.0.1", token=token) as pool:
        frame = _raw_frame(pickle.dumps(Planted(str(marker))))
        path = unix_path(pool.address).replace("\0", "@", 1)
        proc = await asyncio.create_subprocess_exec(*as_nobody(_AS_NOBODY, path, frame.hex()),
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
        await asyncio.sleep(0.2)
        assert b"reply:" in out or b"refused:" in out, out.decode()  # the stranger did get to try
        assert not marker.exists(), out.decode()
        ref = await mo.create_actor(Info, 2, address=pool.address)  # the pool still serves its own user
        assert await mo.ActorRef(pool.address, ref.uid).get_tag() == 2


# -- TLS between hosts ----------------------------------------------------------------------------------------

@pytest.fixture
def tls_files(tmp_path):
    from certs import make_certs

    yield make_certs(tmp_path)
    mo.set_tls(None)


async def test_a_tls_pool_serves_tls_callers_and_refuses_plain_tcp(tls_files):
    ca, cert, key = (str(p) for p in tls_files)
    tls = mo.TLSConfig(cert=cert, key=key, ca=ca)
    async with await mo.create_actor_pool("127.0.0.1", n_process=1, token=TOKEN, tls=tls) as pool:
        assert mo.get_tls() == tls  # the pool's process reaches its peers over TLS too
        ref = await mo.create_actor(Info, "secret", address=pool.address, allocate_strategy=mo.ProcessIndex(1))
        over_tcp = mo.ActorRef("tcp://" + ref.address, ref.uid)
        assert await over_tcp.get_tag() == "secret"  # this process -> the sub pool, TLS and token
        mo.close_connections()
        mo.set_tls(None)
        with pytest.raises(mo.ServerClosed):  # a plain-TCP caller fails the handshake, token or not
            await asyncio.wait_for(over_tcp.get_tag(), 10)
        mo.close_connections()
        mo.set_tls(mo.TLSConfig(ca=ca))  # a client needs only the CA
        assert await over_tcp.get_tag() == "secret"
        assert await mo.ActorRef(ref.address, ref.uid).get_tag() == "secret"  # the Unix socket stays plain


def test_tls_config_names_a_missing_file():
    with pytest.raises(ValueError, match="TLS cert file '/nonexistent.pem' does not exist"):
        mo.TLSConfig(cert="/nonexistent.pem")
