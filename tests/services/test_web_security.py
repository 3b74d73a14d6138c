"""The web API as an attacker sees it: foreign pages, rebinding names, pickles that run commands, huge and slow bodies.

Servers run in this process on MockSessionAPI and are driven with raw aiohttp
requests and sockets, so every header is the attacker's choice; the memory
test starts its server in a subprocess, whose RSS it can measure.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import ssl
import subprocess
import sys
import time

import aiohttp
import numpy as np
import psutil
import pytest
from certs import make_certs

import mars.tensor as mt
from mars.services.session.mock import MockSessionAPI
from mars.services.web import WebClient, WebConnectionError, start_web_server
from mars.services.web.wire import (
    BINARY,
    JSON,
    BadRequest,
    PayloadTooLarge,
    pack_joined,
    read_body,
)

TOKEN = "t0ken-for-attackers-to-guess"
EVIL = "http://evil.example"


class RunsACommand:
    """Unpickling this runs ``command`` in the server: what any pickle may do."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


@pytest.fixture
async def open_server():
    async with await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI) as server:
        yield server


@pytest.fixture
async def secured():
    async with await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI, token=TOKEN) as server:
        yield server


@pytest.fixture
async def http():
    async with aiohttp.ClientSession() as session:
        yield session


async def exploit(tmp_path) -> tuple[bytes, object]:
    marker = tmp_path / "pwned"
    return await pack_joined([RunsACommand(f"touch {marker}")]), marker


# ---------------------------------------------------------------------- pickles that run commands
ATTACKS = {
    "text/plain": {"Content-Type": "text/plain"},
    "form": {"Content-Type": "application/x-www-form-urlencoded"},
    "no type": {},
    "evil origin": {"Content-Type": BINARY, "Origin": EVIL},
}


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_a_pickle_that_runs_a_command_is_refused_unread(open_server, http, tmp_path, attack):
    body, marker = await exploit(tmp_path)
    async with http.post(f"{open_server.url}/api/sessions/x/tasks", data=body, headers=ATTACKS[attack],
                         skip_auto_headers=["Content-Type"]) as resp:
        status, err = resp.status, (await resp.json())["error"]
    assert status in (403, 415), (status, err)
    assert not marker.exists()


@pytest.mark.parametrize("attack, token", [("text/plain", True), ("form", True), ("no type", True),
                                           ("evil origin", True), ("evil origin", False)])
async def test_even_the_token_does_not_make_a_browser_like_request_unpickle(secured, http, tmp_path, attack, token):
    body, marker = await exploit(tmp_path)
    headers = {**ATTACKS[attack], **({"Authorization": f"Bearer {TOKEN}"} if token else {})}
    async with http.post(f"{secured.url}/api/sessions/x/tasks", data=body, headers=headers,
                         skip_auto_headers=["Content-Type"]) as resp:
        assert 400 <= resp.status < 500, await resp.text()
        message = (await resp.json())["error"]["message"]
    assert not marker.exists()
    assert ("evil.example" if "origin" in attack else "application/octet-stream") in message


async def test_with_the_binary_type_and_the_token_the_same_pickle_does_run(secured, http, tmp_path):
    """The control: the refusals above are what stands between a page and this."""
    body, marker = await exploit(tmp_path)
    headers = {"Content-Type": BINARY, "Authorization": f"Bearer {TOKEN}"}
    async with http.post(f"{secured.url}/api/sessions/x/tasks", data=body, headers=headers) as resp:
        assert resp.status == 400  # an int is no tileable: but unpickling it already ran the command
    assert marker.exists()


# ---------------------------------------------------------------------- Host, Origin, preflight, types
@pytest.mark.parametrize("path", ["/api/cluster", "/", "/static/app.js"])
async def test_a_foreign_host_name_is_refused_even_for_the_dashboard(open_server, http, path):
    port = open_server.port
    async with http.get(open_server.url + path, headers={"Host": f"evil.example:{port}"}) as resp:
        assert resp.status == 403
        err = (await resp.json())["error"]
    assert err["type"] == "Forbidden" and "evil.example" in err["message"]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST.:{port}", "127.0.0.1"):
        async with http.get(open_server.url + path, headers={"Host": host}) as resp:
            assert resp.status == 200, (host, await resp.text())


async def test_allowed_hosts_and_origins_are_configurable(http):
    async with await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI, allow_hosts=["mars.internal"],
                                      advertise="head-node", allow_origins=["https://ops.example"]) as server:
        for host, status in (("mars.internal", 200), ("HEAD-NODE:80", 200), ("other.internal", 403)):
            async with http.get(server.url + "/api/cluster", headers={"Host": host}) as resp:
                assert resp.status == status, host
        for origin, status in (("https://ops.example", 200), ("https://ops.example:443", 200),
                               ("http://ops.example", 403), ("null", 403), (server.url, 200)):
            async with http.post(server.url + "/api/sessions", json={}, headers={"Origin": origin}) as resp:
                assert resp.status == status, origin
    with pytest.raises(ValueError, match="allow_origins .* got 'ops.example'"):
        await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI, allow_origins=["ops.example"])


async def test_a_cross_site_post_is_refused_and_the_own_origin_passes(open_server, http):
    api_sessions = open_server.url + "/api/sessions"
    async with http.post(api_sessions, json={"session_id": "a"}, headers={"Origin": EVIL}) as resp:
        assert resp.status == 403 and (await resp.json())["error"]["type"] == "Forbidden"
    async with http.post(api_sessions, json={"session_id": "b"}, headers={"Origin": open_server.url}) as resp:
        assert resp.status == 200  # the dashboard's own POSTs carry its origin
    async with http.get(api_sessions) as resp:
        assert [s["session_id"] for s in await resp.json()] == ["b"]


async def test_a_cors_preflight_gets_403_and_no_allow_headers(open_server, http):
    headers = {"Origin": EVIL, "Access-Control-Request-Method": "POST",
               "Access-Control-Request-Headers": "content-type"}
    for path in ("/api/sessions/x/tasks", "/api/sessions", "/"):
        async with http.options(open_server.url + path, headers=headers) as resp:
            assert resp.status == 403
            assert not [h for h in resp.headers if h.lower().startswith("access-control-allow")], resp.headers
    async with http.options(open_server.url + "/api/sessions") as resp:  # same-origin or not: no preflight
        assert resp.status == 403 and "OPTIONS" in (await resp.json())["error"]["message"]


async def test_json_endpoints_refuse_other_content_types(open_server, http):
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", BINARY):
        async with http.post(open_server.url + "/api/sessions", data=b'{"session_id": "a"}',
                             headers={"Content-Type": ctype}) as resp:
            assert resp.status == 415, ctype
            err = (await resp.json())["error"]
        assert err["type"] == "UnsupportedMediaType" and ctype in err["message"] and JSON in err["message"]
    async with http.post(open_server.url + "/api/sessions", data=b'{"session_id": "a"}',
                         headers={"Content-Type": "application/json; charset=utf-8"}) as resp:
        assert resp.status == 200
    async with http.post(open_server.url + "/api/sessions") as resp:  # no body: no type needed
        assert resp.status == 200


async def test_a_request_without_host_is_400(open_server):
    status, _, body = await raw_exchange(open_server.port, b"GET /api/cluster HTTP/1.0\r\n\r\n")
    assert status == 400 and b"Host" in body


# ---------------------------------------------------------------------- the token, its cookie and its cost
async def test_opening_the_dashboard_with_its_token_sets_a_cookie_that_only_reads(secured, http):
    async with http.get(f"{secured.url}/?token={TOKEN}") as resp:
        assert resp.status == 200
        cookie = resp.headers["Set-Cookie"]
    attrs = {a.strip().split("=")[0].lower(): a.strip() for a in cookie.split(";")}
    assert f"mars_token={TOKEN}" in cookie and "httponly" in attrs and "path" in attrs
    assert attrs["samesite"].lower() == "samesite=strict" and attrs["path"] == "Path=/"
    with_cookie = {"Cookie": f"mars_token={TOKEN}"}
    async with http.get(f"{secured.url}/api/sessions", headers=with_cookie) as resp:
        assert resp.status == 200 and await resp.json() == []
    async with http.post(f"{secured.url}/api/sessions", json={}, headers=with_cookie) as resp:
        assert resp.status == 401
        assert "Authorization" in (await resp.json())["error"]["message"]
    async with http.get(f"{secured.url}/?token=wrong") as resp:
        assert resp.status == 200 and "Set-Cookie" not in resp.headers
    async with http.get(f"{secured.url}/api/sessions", headers={"Cookie": "mars_token=wrong"}) as resp:
        assert resp.status == 401


async def test_a_wrong_token_waits_for_its_401(secured, http):
    start = time.perf_counter()
    async with http.get(f"{secured.url}/api/sessions", headers={"Authorization": "Bearer guess"}) as resp:
        assert resp.status == 401 and resp.headers["WWW-Authenticate"] == "Bearer"
    assert time.perf_counter() - start >= 0.18  # about 0.2 s per guess


async def test_without_the_token_a_huge_body_is_answered_before_it_is_sent(secured):
    head = (f"POST /api/sessions/x/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {BINARY}\r\n"
            f"Content-Length: {1 << 30}\r\n\r\n").encode() + b"MRS1" + bytes(1000)
    start = time.perf_counter()
    status, headers, _ = await raw_exchange(secured.port, head)
    assert status == 401 and headers.get("connection") == "close"
    assert time.perf_counter() - start < 2


# ---------------------------------------------------------------------- bodies
async def raw_exchange(port: int, data: bytes, wait: float = 5.0) -> tuple[int, dict, bytes]:
    """Send ``data`` on a new connection; the status, headers and body of the answer (whatever came in ``wait``)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        got = await asyncio.wait_for(reader.read(1 << 20), wait)
        while b"\r\n\r\n" not in got:
            more = await asyncio.wait_for(reader.read(1 << 20), wait)
            if not more:
                break
            got += more
    finally:
        writer.close()
    head, _, body = got.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return int(lines[0].split()[1]), headers, body


class Chunks:
    """A body stream handing out ``n`` chunks of ``size`` bytes, counting the reads."""

    def __init__(self, n: int, size: int):
        self.n, self.size, self.reads = n, size, 0

    async def readany(self) -> bytes:
        self.reads += 1
        return b"x" * self.size if self.reads <= self.n else b""


async def test_read_body_stops_at_the_limit_and_checks_the_declared_length():
    stream = Chunks(1000, 1000)  # 1 MB: a decoded gzip body, which has no length to refuse it by
    with pytest.raises(PayloadTooLarge, match="limit of 2500"):
        await read_body(stream, None, 2500)
    assert stream.reads == 3  # not one read more than it took to pass the limit
    body = await read_body(Chunks(3, 1000), 3000, 3000)
    assert body == b"x" * 3000 and isinstance(body, bytearray)
    with pytest.raises(BadRequest, match="after 3 of the 10 bytes"):
        await read_body(Chunks(1, 3), 10, 100)


async def test_a_gzip_bomb_is_capped_on_its_decoded_bytes(http):
    async with await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI, max_body_size=1 << 20) as server:
        bomb = gzip.compress(b" " * (32 << 20))  # 32 MiB of spaces, about 32 KB on the wire
        headers = {"Content-Type": JSON, "Content-Encoding": "gzip"}
        async with http.post(server.url + "/api/sessions", data=bomb, headers=headers) as resp:
            assert resp.status == 413 and resp.headers.get("Connection") == "close"
        ok = gzip.compress(json.dumps({"session_id": "zipped"}).encode())
        async with http.post(server.url + "/api/sessions", data=ok, headers=headers) as resp:
            assert await resp.json() == {"session_id": "zipped"}


SERVER_SCRIPT = """
import asyncio, sys
from mars.services.session.mock import MockSessionAPI
from mars.services.web import start_web_server

async def main():
    server = await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI, token=sys.argv[1])
    print(server.port, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the test closes stdin
    await server.stop()

asyncio.run(main())
"""


def _post_heads(port: int, authorized: bool) -> list:
    import socket

    auth = f"Authorization: Bearer {TOKEN}\r\n" if authorized else ""
    head = (f"POST /api/sessions/x/tasks HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {BINARY}\r\n"
            f"{auth}Content-Length: {1 << 30}\r\n\r\nMRS1").encode()
    socks = []
    for _ in range(3):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(head)
        socks.append(s)
    return socks


def test_bodies_declared_huge_take_no_memory_until_they_arrive():
    proc = subprocess.Popen([sys.executable, "-c", SERVER_SCRIPT, TOKEN], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        rss = psutil.Process(proc.pid).memory_info
        base = rss().rss
        for authorized in (False, True):
            socks = _post_heads(port, authorized)
            try:
                time.sleep(0.7)  # the server has the heads: the token checked, its handler reading (or not)
                if not authorized:
                    assert all(s.recv(100).startswith(b"HTTP/1.1 401") for s in socks)
                grown_open = rss().rss - base
            finally:
                for s in socks:
                    s.close()
            time.sleep(0.3)
            grown_closed = rss().rss - base
            assert grown_open < 50 << 20 and grown_closed < 50 << 20, (authorized, grown_open, grown_closed)
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


# ---------------------------------------------------------------------- slow clients
async def test_a_connection_that_trickles_its_headers_is_closed():
    async with await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI, header_timeout=1) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        start = time.perf_counter()
        try:
            writer.write(b"GET /api/clu")
            await writer.drain()
            assert await asyncio.wait_for(reader.read(100), 5) == b""  # closed, with nothing sent back
        finally:
            writer.close()
        assert 0.8 < time.perf_counter() - start < 2.0
        # a connection that sent its headers in time is not cut by the timer: it is kept alive past it
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        try:
            for pause in (1.3, 0):
                writer.write(b"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                answer = await asyncio.wait_for(reader.readuntil(b"[]"), 5)
                assert answer.startswith(b"HTTP/1.1 200")
                await asyncio.sleep(pause)
        finally:
            writer.close()


async def test_an_idle_kept_alive_connection_is_closed_after_keepalive_timeout():
    async with await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI, keepalive_timeout=0.5) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        try:
            writer.write(b"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert (await asyncio.wait_for(reader.readuntil(b"[]"), 5)).startswith(b"HTTP/1.1 200")
            start = time.perf_counter()
            assert await asyncio.wait_for(reader.read(100), 5) == b""
            assert time.perf_counter() - start < 2
        finally:
            writer.close()


@pytest.mark.parametrize("kw, error", [({"header_timeout": 0}, "header_timeout must be positive, got 0"),
                                       ({"keepalive_timeout": -1}, "keepalive_timeout must be positive"),
                                       ({"allow_hosts": "evil.example"}, "allow_hosts must be a list"),
                                       ({"allow_hosts": ["a/b"]}, "allow_hosts must be host"),
                                       ({"ssl_context": "cert.pem"}, "ssl_context must be an ssl.SSLContext")])
async def test_bad_settings_are_refused_naming_them(kw, error):
    with pytest.raises((ValueError, TypeError), match=error):
        await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI, **kw)


# ---------------------------------------------------------------------- TLS
def _server_context(cert, key) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    return ctx


async def test_https_serves_clients_that_trust_its_ca_and_no_one_else(tmp_path, http, monkeypatch):
    ca, cert, key = make_certs(tmp_path)
    async with await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI,
                                      ssl_context=_server_context(cert, key)) as server:
        assert server.url.startswith("https://127.0.0.1:")
        async with WebClient(server.url, ssl=ssl.create_default_context(cafile=str(ca))) as client:
            assert await client.create_session("over-tls") == "over-tls"
            info = await client.submit_and_wait("over-tls", [mt.arange(4) + 1], wait=30)
            np.testing.assert_array_equal(info.inline_values[info.results[0].chunks[0].key], np.arange(4) + 1)
        monkeypatch.setenv("MARS_TLS_CA", str(ca))
        async with WebClient(f"https://localhost:{server.port}") as client:  # the CA from the environment
            assert [s["session_id"] for s in await client.list_sessions()] == ["over-tls"]
        monkeypatch.delenv("MARS_TLS_CA")
        with pytest.raises(WebConnectionError, match="trust"):
            async with WebClient(server.url, timeout=5) as client:
                await client.list_sessions()
        with pytest.raises(aiohttp.ClientError):
            async with http.get(f"http://127.0.0.1:{server.port}/api/sessions",
                                timeout=aiohttp.ClientTimeout(total=5)) as resp:
                await resp.read()
