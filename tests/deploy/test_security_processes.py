"""A default cluster of real processes, tried as an attacker would (issue: secure by default).

Nodes are started as the seed documents type them, on loopback, with no
token given. Whoever sends bytes to a port must not run code: a web page
(foreign ``Origin``/``Host``, ``text/plain`` bodies), another OS user of the
host, or anyone who announces huge bodies or frames before authenticating.
Each attack plants a pickle whose unpickling would create a marker file.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

import mars
import mars.tensor as mt
from mars.oscar.transport import unix_path
from other_user import as_nobody, needs_another_user
from process_nodes import Node, api_get, start_supervisor, start_worker

pytestmark = pytest.mark.timeout(180)


class Planted:
    """Unpickling this runs a shell command that creates ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple:
        return os.system, (f"touch {self.path}",)


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, Any]]:
    """The seed commands as typed: a supervisor with its web port and one worker, no token anywhere."""
    sup, address, url = start_supervisor()
    try:
        worker = start_worker(address, "--n-cpu", "1", "--n-io-process", "1")
        try:
            yield {"sup": sup, "address": address, "url": url, "worker": worker}
        finally:
            worker.stop()
    finally:
        sup.stop()


def _planted_body(marker: str) -> bytes:
    """The planted object framed as the web client frames a task's tileables."""
    from mars.services.web.wire import pack_joined

    return asyncio.run(pack_joined([Planted(marker)]))


def _http(url: str, raw_head: str, body: bytes = b"", timeout: float = 10) -> bytes:
    """Send one raw HTTP request to the web service at ``url``; the whole reply."""
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(raw_head.encode() + body)
        return _read_all(sock)


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except OSError:
        pass
    return data


def _status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/") else 0


def test_the_seed_commands_run_a_job_with_no_token_typed(cluster):
    assert cluster["sup"].token, "a loopback supervisor has a token too, shown in its URL"
    with mars.new_session(cluster["url"], default=False) as sess:  # found beside the supervisor, same user
        assert sess.run(mt.ones((5, 5), chunk_size=3).sum()) == 25
    with mars.new_session(cluster["address"], default=False) as sess:  # the actor protocol finds it too
        assert sess.run((mt.ones(4, chunk_size=2) * 3).sum()) == 12


@pytest.mark.parametrize("headers", [
    "Content-Type: text/plain\r\nOrigin: http://evil.example\r\n",
    "Content-Type: application/x-www-form-urlencoded\r\n",
    "",
    "Content-Type: application/octet-stream\r\n",
], ids=["text-plain-foreign-origin", "form", "no-content-type", "binary-without-token"])
def test_a_web_page_cannot_run_code_through_the_task_endpoint(cluster, tmp_path, headers):
    marker = tmp_path / "pwned"
    body = _planted_body(str(marker))
    host = cluster["url"].split("//", 1)[1]
    reply = _http(cluster["url"], f"POST /api/sessions/x/tasks HTTP/1.1\r\nHost: {host}\r\n{headers}"
                  f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n", body)
    assert 400 <= _status(reply) < 500, reply[:300]
    time.sleep(0.3)
    assert not marker.exists()


def test_even_the_token_with_a_foreign_origin_or_a_simple_content_type_is_refused(cluster, tmp_path):
    marker = tmp_path / "pwned"
    body = _planted_body(str(marker))
    host = cluster["url"].split("//", 1)[1]
    auth = f"Authorization: Bearer {cluster['sup'].token}\r\n"
    for headers in ("Content-Type: text/plain\r\n",
                    "Content-Type: application/octet-stream\r\nOrigin: http://evil.example\r\n"):
        reply = _http(cluster["url"], f"POST /api/sessions/x/tasks HTTP/1.1\r\nHost: {host}\r\n{auth}{headers}"
                      f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n", body)
        assert _status(reply) in (403, 415), reply[:300]
    time.sleep(0.3)
    assert not marker.exists()


def test_a_foreign_host_header_reads_nothing(cluster):
    """DNS rebinding: a page at evil.example whose name now resolves to 127.0.0.1."""
    port = cluster["url"].rsplit(":", 1)[1]
    for path in ("/api/cluster", "/"):
        reply = _http(cluster["url"], f"GET {path}?token={cluster['sup'].token} HTTP/1.1\r\n"
                      f"Host: evil.example:{port}\r\nConnection: close\r\n\r\n")
        assert _status(reply) == 403, reply[:300]
    assert api_get(cluster["url"], "/api/cluster")["supervisors"]  # the real host still reads


def _rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


def test_announced_gigabyte_bodies_are_not_allocated(cluster):
    """Three connections each announcing a 1 GiB body (with and without the token) and sending 1 MiB."""
    pid = cluster["sup"].process.pid
    host = cluster["url"].split("//", 1)[1]
    before = _rss(pid)
    socks = []
    for auth in ("", f"Authorization: Bearer {cluster['sup'].token}\r\n"):
        for _ in range(3):
            name, port = host.rsplit(":", 1)
            sock = socket.create_connection((name, int(port)), timeout=5)
            sock.sendall(f"POST /api/sessions/x/tasks HTTP/1.1\r\nHost: {host}\r\n{auth}"
                         f"Content-Type: application/octet-stream\r\nContent-Length: {1 << 30}\r\n\r\n".encode())
            try:
                sock.sendall(bytes(1 << 20))
            except OSError:
                pass  # refused before the body: what an unauthenticated one should get
            socks.append(sock)
    time.sleep(1.0)
    grown = _rss(pid) - before
    for sock in socks:
        sock.close()
    assert grown < 50 << 20, f"the supervisor grew by {grown >> 20} MiB on bodies it was only promised"
    assert api_get(cluster["url"], "/api/cluster")["supervisors"]  # and serves on


def test_bytes_sent_to_an_actor_port_before_the_token_are_not_kept(cluster):
    pid = cluster["sup"].process.pid
    host, port = cluster["address"].rsplit(":", 1)
    before = _rss(pid)
    with socket.create_connection((host, int(port)), timeout=2) as sock:
        sock.sendall(struct.pack("<BQIH", 1, 1, 2**32 - 1, 0))
        sent = 0
        try:
            while sent < 150 << 20:
                sent += sock.send(bytes(1 << 20))
        except OSError:
            pass
        grown = _rss(pid) - before
    assert sent < 150 << 20 and grown < 10 << 20, (sent >> 20, grown >> 20)


# ------------------------------------------------------------------ another user of the host

_AS_NOBODY = r"""
import json, socket, sys
results = {}
for target in json.loads(sys.argv[1]):
    kind, where, data = target["kind"], target["where"], bytes.fromhex(target["data"])
    try:
        if kind == "unix":
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(3)
            sock.connect("\0" + where[1:])
        else:
            host, port = where.rsplit(":", 1)
            sock = socket.create_connection((host, int(port)), timeout=3)
        sock.sendall(data)
        reply = b""
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except OSError:
            pass
        results[kind + " " + where] = reply[:200].decode("latin-1")
    except OSError as e:
        results[kind + " " + where] = "refused: " + str(e)
print(json.dumps(results))
"""


@needs_another_user
def test_another_os_user_is_refused_by_every_port(cluster, tmp_path):
    marker = tmp_path / "pwned"
    tmp_path.chmod(0o777)
    frame = pickle.dumps(Planted(str(marker)))
    actor_frame = struct.pack("<BQIH", 1, 1, len(frame), 0) + frame
    info = api_get(cluster["url"], "/api/cluster/workers")[0]
    pools = [cluster["address"], info["address"], *info["slot_addresses"], *info["io_addresses"]]
    body = _planted_body(str(marker))
    host = cluster["url"].split("//", 1)[1]
    http = (f"POST /api/sessions/x/tasks HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/octet-stream\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    targets = [{"kind": "tcp", "where": host, "data": http.hex()}]
    for pool in pools:
        targets.append({"kind": "tcp", "where": pool, "data": actor_frame.hex()})
        targets.append({"kind": "unix", "where": unix_path(pool).replace("\0", "@", 1), "data": actor_frame.hex()})
    out = subprocess.run(as_nobody(_AS_NOBODY, json.dumps(targets)), capture_output=True, text=True, timeout=120)
    results = json.loads(out.stdout or "{}")
    assert len(results) == len(targets), out.stderr
    time.sleep(0.3)
    assert not marker.exists(), results
    for where, reply in results.items():
        if where.startswith("unix"):
            assert reply == "" or reply.startswith("refused"), (where, reply)  # hung up on at once
        elif where == f"tcp {host}":
            assert reply.startswith("HTTP/1.1 401"), (where, reply)
        else:
            assert "requires a token" in reply, (where, reply)


# ------------------------------------------------------------------ tokens stay off command lines

def _command_lines() -> list[str]:
    lines = []
    for proc in psutil.process_iter(["cmdline"]):
        lines.append(" ".join(proc.info["cmdline"] or []))
    return lines


def test_no_process_shows_the_token_on_its_command_line(tmp_path):
    from mars.deploy.local import new_cluster

    with new_cluster(n_worker=1, n_cpu=1, n_io_process=1) as local:
        assert local.token and not any(local.token in line for line in _command_lines())
    token_file = tmp_path / "token"
    token_file.write_text("cmdline-secret-token-1234\n")
    token_file.chmod(0o600)
    sup = Node("supervisor", "-H", "127.0.0.1", "-p", "0", "-w", "0", "--token-file", str(token_file))
    try:
        address = sup.wait_for("Mars supervisor started at").rsplit(" ", 1)[1]
        worker = start_worker(address, "--n-cpu", "1", "--n-io-process", "1")
        try:
            assert not any("cmdline-secret-token-1234" in line for line in _command_lines())
        finally:
            worker.stop()
    finally:
        sup.stop()


# ------------------------------------------------------------------ TLS

def test_a_tls_cluster_runs_a_job_and_refuses_plain_clients(tmp_path):
    from certs import make_certs

    import mars.oscar as mo

    ca, cert, key = (str(p) for p in make_certs(tmp_path))
    tls = ("--tls-cert", cert, "--tls-key", key, "--tls-ca", ca)
    sup = Node("supervisor", "-H", "127.0.0.1", "-p", "0", "-w", "0", *tls)
    worker = None
    try:
        address = sup.wait_for("Mars supervisor started at").rsplit(" ", 1)[1]
        printed = sup.wait_for("Mars Web started at").rsplit(" ", 1)[1]
        assert printed.startswith("https://127.0.0.1:"), printed
        worker = start_worker(address, "--n-cpu", "1", *tls)
        url = printed.split("?", 1)[0]
        mo.set_tls(mo.TLSConfig(ca=ca))  # what MARS_TLS_CA gives a client
        try:
            with mars.new_session(url, default=False) as sess:
                assert sess.run((mt.ones((6, 6), chunk_size=4) * 2).sum()) == 72
        finally:
            mo.set_tls(None)
        plain = _http("http://" + url.split("//", 1)[1], "GET /api/cluster HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Connection: close\r\n\r\n")
        assert not plain.startswith(b"HTTP/1.1 2"), plain[:200]  # no plain HTTP answer from a TLS port
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as sock:  # a plain actor frame over TCP
            sock.sendall(struct.pack("<BQIH", 6, 0, 5, 0) + b"guess")
            assert b"token" not in _read_all(sock)  # the TLS handshake failed: nothing was read as a frame
    finally:
        if worker is not None:
            worker.stop()
        sup.stop()


# ------------------------------------------------------------------ --insecure, and a worker with no token

def test_insecure_runs_without_a_token_and_says_so_at_every_start():
    sup = Node("supervisor", "-H", "127.0.0.1", "-p", "0", "-w", "0", "--insecure")
    worker = None
    try:
        sup.wait_for("WITHOUT a token (--insecure)")
        address = sup.wait_for("Mars supervisor started at").rsplit(" ", 1)[1]
        url = sup.wait_for("Mars Web started at").rsplit(" ", 1)[1]
        assert "token=" not in url
        worker = Node("worker", "-H", "127.0.0.1", "-s", address, "--n-cpu", "1", "--insecure")
        worker.wait_for("WITHOUT a token (--insecure)")
        worker.wait_for("Mars worker started at")
        with mars.new_session(url, default=False) as sess:
            assert sess.run(mt.arange(6, chunk_size=4).sum()) == 15
    finally:
        if worker is not None:
            worker.stop()
        sup.stop()


def test_a_worker_with_no_token_for_a_remote_supervisor_says_what_to_pass():
    worker = Node("worker", "-H", "127.0.0.1", "-s", "192.0.2.1:7001", "--n-cpu", "1")
    try:
        assert worker.process.wait(60) == 1
        line = worker.wait_for("no token for the cluster at 192.0.2.1:7001")
        assert "--token-file" in line and "MARS_TOKEN" in line
    finally:
        worker.stop()
