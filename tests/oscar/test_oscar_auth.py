"""Pools started with a token unpickle nothing until a connection shows it."""

from __future__ import annotations

import asyncio
import pathlib
import pickle
import socket
import struct

import pytest

import mars.oscar as mo
from mars.oscar.transport import unix_path
from oscar_actors import Info, Node

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
