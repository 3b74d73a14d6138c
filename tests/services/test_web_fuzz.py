"""The web API fuzzed on a real cluster: malformed, truncated and oversized requests.

A cluster of processes (``new_cluster(n_worker=2, n_cpu=1)``) serves the API;
hypothesis builds requests from docs/openapi.yaml (every route, right and
wrong methods, odd path parameters and queries, JSON and binary bodies of
every wrong shape, odd headers, raw HTTP framing; see web_fuzz_kit.py) and
each answer must be a 4xx in the API's JSON error format, or a 200 where the
request is in fact valid (``is_valid`` decides, route by route). Requests
that aiohttp's own HTTP parser refuses (a request line over 8 KB, broken
framing) get its plain-text 400: they never reach the application.

Meanwhile a long job and a stream of small ones run on the cluster and must
all give numpy's results; afterwards the supervisor is alive, serves new
jobs, and its log holds no server error from the web service. Two small web
servers in this process, pointed at the same supervisor, check the body limit
(413) and the token (401 before the body is read). Foreign Hosts and Origins,
preflights and wrong Content-Types are refused before the token (403, 415:
guard.py); test_web_security.py attacks those on purpose.

The default runs 100-300 examples per strategy (about half a minute).
Deep mode runs every strategy with N examples (N=2000: about two minutes)::

    MARS_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest tests/services/test_web_fuzz.py -p no:cacheprovider

Examples are derandomized, so a failure reproduces on every run. The tests
marked xfail are bugs the fuzzing found outside the web service (their
reasons say where); they fail loudly (strict) once fixed.
"""
from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json
import os
import pickle
import struct
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import Phase, given
from hypothesis import strategies as st

import mars
import mars.dataframe as md
import mars.oscar as mo
import mars.tensor as mt
from mars.core.entity import TileableData
from mars.deploy.local import new_cluster
from mars.services.web import server as web_server
from mars.services.web import start_web_server
from mars.services.web.dashboard import STATIC_DIR
from mars.services.web.routes import BODY_TYPES
from mars.services.web.wire import BINARY, MAGIC, pack_joined, unpack

from .openapi_check import check
from .web_fuzz_kit import (
    DEEP,
    ERROR,
    HOST,
    JSON,
    SMALL_LIMIT,
    SPEC,
    TOKEN,
    Blob,
    Call,
    Driver,
    Reply,
    Req,
    assert_answer,
    assert_error_body,
    calls,
    could_be_id,
    frame,
    frame_bodies,
    fuzz,
    http_malformed,
    json_bodies,
    json_body,
    keys_of,
    limit_ok,
    query_value,
    since_ok,
    stream_limit_ok,
    wait_ok,
)
from mars.services.execution.stream import MAX_BATCH as STREAM_BATCH

pytestmark = pytest.mark.timeout(max(180, int(os.environ.get("MARS_FUZZ_EXAMPLES", "0")) // 4))


# ---------------------------------------------------------------------- the cluster
class Env:
    """The cluster, its known ids, the driver, and the two small web servers of this process."""

    jobs: Jobs

    def __init__(self) -> None:
        self.cluster = new_cluster(n_worker=2, n_cpu=1)
        self.web = self.cluster.web_address
        self.driver = Driver(tokens={self.web: self.cluster.token})  # requests to the cluster carry its token
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        # the small servers below reach the supervisor over the actor protocol, which takes the cluster's token
        self._process_token = mo.get_token()
        mo.set_token(self.cluster.token)
        self.small = self.driver.run(start_web_server("127.0.0.1", 0, [self.cluster.endpoint],
                                                      max_body_size=SMALL_LIMIT))
        self.secured = self.driver.run(start_web_server("127.0.0.1", 0, [self.cluster.endpoint], token=TOKEN,
                                                        max_body_size=SMALL_LIMIT))
        self.workers = list(self.cluster.worker_addresses)
        self.supervisors = [self.cluster.endpoint]
        self.valid_frame = self.driver.run(pack_joined([(mt.ones((5, 5), chunk_size=3) * 4).data]))
        with_data = mt.tensor(np.arange(300.0), chunk_size=100) + 1  # its numpy data travels out of band
        self.frame_with_buffer = self.driver.run(pack_joined([with_data.data]))
        self.sid = self.post_json("/api/sessions", {"session_id": "fuzz-session"})["session_id"]
        info = self.submit(self.sid, self.valid_frame)
        self.tid, self.keys = info.task_id, [c.key for r in info.results for c in r.chunks]

    def post_json(self, path: str, obj: Any) -> Any:
        reply = self.driver.send(self.web, Req("POST", path, body=json.dumps(obj).encode(),
                                               headers={"Content-Type": JSON}))
        assert reply.status == 200, reply
        return reply.json()

    def submit(self, sid: str, frame: bytes) -> Any:
        reply = self.driver.send(self.web, Req("POST", f"/api/sessions/{sid}/tasks", "wait=30", body=frame,
                                               headers={"Accept": BINARY, "Content-Type": BINARY}))
        assert reply.status == 200, reply
        return self.driver.run(unpack(bytearray(reply.body)))

    def decodes(self, body: bytes) -> bool:
        """Whether ``body`` is a frame of tileables after all (some lies are consistent: an unused empty buffer)."""
        try:
            obj = self.driver.run(unpack(bytearray(body)))
        except Exception:  # noqa: BLE001 - any refusal means the server refuses it too
            return False
        return isinstance(obj, list) and bool(obj) and all(isinstance(t, TileableData) for t in obj)

    def server_errors(self, since: float) -> list[dict]:
        """Log records of the supervisor since ``since`` that tell of a server error in the web service."""
        address = urllib.parse.quote(self.cluster.endpoint, safe="")
        reply = self.driver.send(self.web, Req("GET", f"/api/cluster/supervisors/{address}/logs", "limit=10000"))
        assert reply.status == 200, reply
        return [r for r in reply.json()["records"] if r["time"] >= since and _is_server_error(r)]

    def stop(self) -> None:
        try:
            for server in (getattr(self, "small", None), getattr(self, "secured", None)):
                if server is not None:
                    self.driver.run(server.stop())
            self.driver.close()
        finally:
            self.cluster.stop()
            if hasattr(self, "_process_token"):
                mo.set_token(self._process_token)


def _is_server_error(record: dict) -> bool:
    # the web service logs every 5xx it answers; aiohttp's own errors (a request it cannot parse, a broken
    # body it fails to drain after the 400 went out) are logged by aiohttp.server and are not 5xx
    return record["level"] in ("ERROR", "CRITICAL") and record["logger"].startswith("mars.services.web")


class Jobs:
    """A long job submitted before the fuzzing, and small jobs one after another while it lasts."""

    STEPS = 24

    def __init__(self, session: Any) -> None:
        # a chain of matrix products, a few seconds on two one-core workers (longer under the fuzzing's load)
        self.x = mt.random.RandomState(7).rand(1500, 1500, chunk_size=500)
        self.long = self.x
        for _ in range(self.STEPS):
            self.long = (self.long @ self.x) / 1500
        self.started, self.ended = time.time(), 0.0
        self.future = session.execute(self.x, self.long, wait=False)
        self.future.add_done_callback(lambda _: setattr(self, "ended", time.time()))
        self.session = mars.new_session(session.address, default=False)
        self.done: list[bool] = []  # one per small job: whether it gave numpy's result
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="fuzz-jobs")
        self._thread.start()

    def _loop(self) -> None:
        i = 0
        while not self._stop.is_set():
            data = np.arange(i, i + 2000, dtype=float).reshape(40, 50)
            try:
                got = self.session.run((mt.tensor(data, chunk_size=17) * 3).cumsum(axis=1))
            except BaseException as e:  # noqa: BLE001 - the test reports it
                self.errors.append(e)
                return
            self.done.append(bool(np.allclose(got, (data * 3).cumsum(axis=1))))
            i += 1

    def finish(self) -> None:
        self._stop.set()
        self._thread.join(60)
        self.session.close()


@pytest.fixture(scope="module")
def env():
    e = Env()
    e.jobs = Jobs(e.cluster.session)
    try:
        yield e
    finally:
        e.jobs.finish()
        e.stop()
        print(f"\nrequests sent: {sum(e.driver.sent.values())} {e.driver.sent}; long job: "
              f"{e.jobs.ended - e.jobs.started:.1f} s; small jobs run meanwhile: {len(e.jobs.done)}; "
              f"answers by status: {dict(sorted(e.driver.statuses.items()))}")


def run_fuzz(env: Env, test: Callable[[], None], caplog: Any = None) -> None:
    """Run a hypothesis test, then check that the web service logged no server error meanwhile: in the
    supervisor, and with ``caplog`` in this process (the small servers)."""
    since = time.time()
    test()
    errors = env.server_errors(since)
    assert not errors, f"the web service logged server errors: {errors[:3]}"
    if caplog is not None:
        here = [r.getMessage() for r in caplog.records
                if r.levelname == "ERROR" and r.name.startswith("mars.services.web")]
        assert not here, f"a web server of this process logged server errors: {here[:3]}"


# ---------------------------------------------------------------------- which requests may succeed
ALWAYS_OK = {("GET", "/api/sessions"), ("GET", "/api/cluster"), ("GET", "/api/cluster/workers"),
             ("GET", "/api/cluster/supervisors"), ("GET", "/"), ("GET", "/index.html"), ("GET", "/favicon.ico"),
             ("DELETE", "/api/sessions/{sid}"),  # deleting a session that is not held is no error
             ("GET", "/api/health")}


def is_valid(env: Env, call: Call, reply: Reply) -> bool:
    """Whether a 2xx answer is right for ``call``: its request really is valid, per route.

    Queries a route does not read are ignored, so they never make a request invalid. A session id that
    fits the id rules may name a session (the fuzzing creates some with POST /api/sessions), so a 200
    for it is allowed where the session's existence is all that matters; tasks, chunks and nodes must
    be the ones this test knows to exist.
    """
    req, p = call.req, call.params
    method = "GET" if req.method == "HEAD" else req.method
    if (method, call.route) in ALWAYS_OK:
        return True
    sid, tid, address = p.get("sid", ""), p.get("tid"), p.get("address")
    known_task = sid == env.sid and tid == env.tid
    node = address in (env.supervisors if "/supervisors/" in (call.route or "") else env.workers)
    rules: dict[tuple[str, str], Callable[[], bool]] = {
        ("GET", "/static/{name}"): lambda: (STATIC_DIR / p["name"]).is_file(),
        ("GET", "/api/sessions/{sid}"): lambda: could_be_id(sid),
        ("GET", "/api/sessions/{sid}/tasks"): lambda: could_be_id(sid),
        ("GET", "/api/sessions/{sid}/tasks/{tid}"): lambda: known_task and wait_ok(req),
        ("GET", "/api/sessions/{sid}/tasks/{tid}/graph"):
            lambda: known_task and query_value(req, "level") in (None, "tileable", "subtask"),
        ("POST", "/api/sessions/{sid}/tasks/{tid}/cancel"): lambda: known_task,
        ("POST", "/api/sessions"): lambda: _session_body_ok(req),
        # only a whole frame of tileables (the strategy knows which it built) makes a task
        ("POST", "/api/sessions/{sid}/tasks"): lambda: req.valid_body and could_be_id(sid) and wait_ok(req),
        ("POST", "/api/sessions/{sid}/fetch"): lambda: _fetch_ok(env, sid, keys_of(req)),
        # releasing keys a session does not hold drops nothing, and is no error
        ("POST", "/api/sessions/{sid}/release"): lambda: could_be_id(sid) and keys_of(req) is not None,
        ("GET", "/api/cluster/workers/{address}"): lambda: address in env.workers,
        ("GET", "/api/cluster/workers/{address}/logs"): lambda: node and limit_ok(req),
        ("GET", "/api/cluster/supervisors/{address}/logs"): lambda: node and limit_ok(req),
        ("GET", "/api/cluster/workers/{address}/stacks"): lambda: node,
        ("GET", "/api/cluster/supervisors/{address}/stacks"): lambda: node,
        # the observability routes: any session or task (one with no events has an empty stream)
        ("GET", "/api/stream"): lambda: since_ok(req) and stream_limit_ok(req, STREAM_BATCH),
        ("GET", "/api/sessions/{sid}/tasks/{tid}/stream"): lambda: since_ok(req) and stream_limit_ok(req, STREAM_BATCH),
        ("GET", "/api/sessions/{sid}/tasks/{tid}/profile"): lambda: True,
        ("GET", "/api/cluster/series"): lambda: since_ok(req),
        ("GET", "/api/cluster/workers/{address}/series"): lambda: since_ok(req),
        ("GET", "/metrics"): lambda: True,
    }
    rule = rules.get((method, call.route or ""))
    return rule is not None and rule()


def _session_body_ok(req: Req) -> bool:
    body = json_body(req)
    if not isinstance(body, dict):
        return False
    sid = body.get("session_id")
    return sid is None or (isinstance(sid, str) and could_be_id(sid))


def _fetch_ok(env: Env, sid: str, keys: list[str] | None) -> bool:
    if keys is None:
        return False
    return (not keys and could_be_id(sid)) or (sid == env.sid and set(keys) <= set(env.keys))


def send_and_check(env: Env, call: Call, base: str | None = None) -> Reply:
    reply = env.driver.send(base or env.web, call.req)
    assert_answer(reply, call.req, lambda r: is_valid(env, call, r))
    return reply


# ---------------------------------------------------------------------- the fuzz tests
def test_every_route_and_method_with_odd_paths_queries_and_bodies(env):
    @fuzz(300)
    @given(call=calls(env))
    def one(call: Call) -> None:
        send_and_check(env, call)

    run_fuzz(env, one)


def test_json_bodies_of_wrong_shapes_types_and_sizes(env):
    routes = ["/api/sessions", f"/api/sessions/{env.sid}/fetch", f"/api/sessions/{env.sid}/release",
              "/api/sessions/no-such-session/fetch", f"/api/sessions/{env.sid}/tasks"]

    @fuzz(300)
    @given(path=st.sampled_from(routes), body=json_bodies(), ctype=st.sampled_from([JSON, BINARY, None]))
    def one(path: str, body: tuple, ctype: str | None) -> None:
        route = "/api/sessions" + ("" if path == "/api/sessions" else "/{sid}/" + path.rsplit("/", 1)[1])
        sid = path.split("/")[3] if path != "/api/sessions" else ""
        req = Req("POST", path, body=body[0], headers={"Content-Type": ctype} if ctype else {})
        send_and_check(env, Call(req, route, {"sid": sid}))

    run_fuzz(env, one)


def test_binary_frames_truncated_lying_and_foreign(env):
    @fuzz(300)
    @given(body=frame_bodies(env), sid=st.sampled_from([env.sid, "no-such-session"]),
           wait=st.sampled_from(["", "wait=0", "wait=5"]))
    def one(body: tuple, sid: str, wait: str) -> None:
        req = Req("POST", f"/api/sessions/{sid}/tasks", wait, {"Content-Type": BINARY}, body[0], valid_body=body[1])
        reply = send_and_check(env, Call(req, "/api/sessions/{sid}/tasks", {"sid": sid}))
        if reply.status == 400:
            assert reply.json()["error"]["type"] == "BadRequest"

    run_fuzz(env, one)


CONTENT_TYPES = [None, JSON, BINARY, "text/plain", "multipart/form-data; boundary=xyz", "garbage", "",
                 "application/json; charset=utf-16", "application/x-www-form-urlencoded",
                 "application/json; charset=nonexistent"]
ACCEPTS = [None, BINARY, JSON, "*/*", "text/html", "", f"{BINARY}, {JSON}"]
ENCODINGS = [None, "gzip", "deflate", "identity", "x-unknown", "gzip, deflate", "GZIP"]


@st.composite
def header_calls(draw: Any, env: Env) -> Call:
    """Requests with odd Content-Type, Accept and Content-Encoding headers, some sent chunked."""
    call = draw(calls(env, methods=["POST", "GET", "DELETE"]))
    req = call.req
    for name, choices in (("Content-Type", CONTENT_TYPES), ("Accept", ACCEPTS)):
        value = draw(st.sampled_from(choices))
        req.headers.pop(name, None)
        if value is not None:
            req.headers[name] = value
    encoding = draw(st.sampled_from(ENCODINGS))
    if encoding is not None:
        req.headers["Content-Encoding"] = encoding
        if encoding.lower() == "gzip" and draw(st.booleans()):
            req.body = gzip.compress(req.body or b"")  # a real gzip body: still valid when its content is
        elif encoding != "identity":
            req.valid_body = False
    req.chunked = req.body is not None and draw(st.booleans())
    return call


def test_headers_content_encodings_and_chunked_bodies(env):
    @fuzz(250)
    @given(call=header_calls(env))
    def one(call: Call) -> None:
        send_and_check(env, call)

    run_fuzz(env, one)


BAD_LENGTHS = ["-1", "abc", "1e3", "99999999999999999999999", "5, 6", "0x10", "", "+5"]
FRAMINGS = ["none", "length", "short", "long", "bad-length", "two-lengths", "chunked", "bad-chunk", "open-chunked",
            "length-and-chunked", "te-gzip"]
RAW_METHODS = ["GET", "POST", "DELETE", "FOO", "get", "G\x00T"]
RAW_VERSIONS = ["HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", "HTTP/0.9"]


def _chunked(body: bytes, cut: int) -> bytes:
    parts = [body[:cut], body[cut:]] if 0 < cut < len(body) else [body]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts if p) + b"0\r\n\r\n"


@st.composite
def raw_requests(draw: Any, env: Env) -> tuple[Blob, bool, str]:
    """A request as bytes with lying or broken framing, whether it is complete (an answer comes), its framing."""
    method, version = draw(st.sampled_from(RAW_METHODS)), draw(st.sampled_from(RAW_VERSIONS))
    path = draw(st.sampled_from(["/api/sessions", f"/api/sessions/{env.sid}/fetch", f"/api/sessions/{env.sid}/tasks",
                                 f"/api/sessions/{env.sid}/release", "/api/sessions/x y", "*", "http://other/api",
                                 "/api/sessions?wait=%", "/" + "a" * 9000]))
    body = draw(st.sampled_from([b'{"keys": []}', b"", env.valid_frame[:40], b"x" * 3]) | st.binary(max_size=64))
    framing = draw(st.sampled_from(FRAMINGS))
    cut = draw(st.integers(0, 70))
    head = {"none": "", "length": f"Content-Length: {len(body)}\r\n",
            "short": f"Content-Length: {max(len(body) - 1 - cut % 5, 0)}\r\n",
            "long": f"Content-Length: {len(body) + 1 + cut}\r\n",
            "bad-length": f"Content-Length: {draw(st.sampled_from(BAD_LENGTHS))}\r\n",
            "two-lengths": f"Content-Length: {len(body)}\r\nContent-Length: {len(body) + 1}\r\n",
            "length-and-chunked": f"Content-Length: {len(body)}\r\nTransfer-Encoding: chunked\r\n",
            "te-gzip": "Transfer-Encoding: gzip, chunked\r\n"}.get(framing, "Transfer-Encoding: chunked\r\n")
    payload = body
    if framing in ("chunked", "length-and-chunked", "te-gzip"):
        payload = _chunked(body, cut)
    elif framing == "bad-chunk":
        payload = draw(st.sampled_from([b"ZZ\r\nab\r\n0\r\n\r\n", b"-1\r\n\r\n", b"fffffffffffffffffff\r\n",
                                        b"3;ext\r\nabc\r\n0\r\n\r\n", b"3\r\nabcde\r\n0\r\n\r\n"]))
    elif framing == "open-chunked":
        payload = _chunked(body, cut)[:-5]  # no last chunk: the body never ends
    extra = draw(st.sampled_from(["", "X-Odd: \x01\r\n", "Bad Header: x\r\n", ": novalue\r\n", "Host: a\r\n",
                                  "X-Long: " + "h" * 9000 + "\r\n", "Expect: 100-continue\r\n"]))
    ctype = BINARY if path.endswith("/tasks") else JSON  # the route's own: the framing is what is fuzzed here
    raw = (f"{method} {path} {version}\r\nHost: {HOST}\r\nConnection: close\r\nContent-Type: {ctype}\r\n"
           f"{head}{extra}\r\n").encode("latin-1")
    complete = framing not in ("long", "open-chunked") and not (framing == "bad-chunk" and payload.startswith(b"3;"))
    return Blob(raw + payload), complete, framing


def test_raw_http_framing(env):
    """Lying Content-Length, broken chunking, odd request lines: every answer is a 4xx, never a 5xx."""
    @fuzz(150)
    @given(request=raw_requests(env))
    def one(request: tuple[Blob, bool, str]) -> None:
        data, complete, framing = request
        reply = env.driver.raw(env.web, [data], wait=5.0 if complete else 0.05)
        if reply is None:
            return  # an unfinished body: the server waits for the rest, and the log check below sees the end
        # a 200 needs framing that says where the body ends (aiohttp reads "gzip, chunked" as chunked), or a
        # GET, whose handlers never read a body
        framed = framing in ("none", "length", "short", "chunked", "te-gzip")
        ok = reply.status == 200 and (framed or data.startswith(b"GET "))
        assert 400 <= reply.status < 500 or ok, (reply, data)
        if reply.content_type == JSON and reply.status >= 400:
            check(SPEC, ERROR, reply.json())
        elif reply.status >= 400:
            assert reply.status == 400 and reply.content_type == "text/plain", (reply, data)

    run_fuzz(env, one)


# ---------------------------------------------------------------------- the body limit
BODY_ROUTES = ["/api/sessions", "/api/sessions/{sid}/tasks", "/api/sessions/{sid}/fetch", "/api/sessions/{sid}/release"]


def test_bodies_over_the_limit_get_413(env, caplog):
    """A small server (same supervisor, 4 KiB limit): whatever the framing, an oversized body is a 413."""
    @fuzz(120)
    @given(route=st.sampled_from(BODY_ROUTES), sid=st.sampled_from([env.sid, "no-such-session"]),
           size=st.integers(SMALL_LIMIT + 1, 300_000), how=st.sampled_from(["length", "chunked", "gzip"]))
    def one(route: str, sid: str, size: int, how: str) -> None:
        body = b" " * (size - 2) + b"{}"
        headers = {"Content-Type": BODY_TYPES[("POST", route)]}  # another type is a 415, before the size counts
        if how == "gzip":  # a few hundred bytes on the wire, over the limit once decoded
            body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
        req = Req("POST", route.replace("{sid}", sid), headers=headers, body=Blob(body), chunked=how == "chunked")
        reply = env.driver.send(env.small.url, req)
        assert reply.status == 413, (reply, req)
        assert assert_error_body(reply, req)["type"] == "PayloadTooLarge"

    run_fuzz(env, one, caplog)


def test_the_limit_is_exact_and_checked_before_reading(env):
    at_limit = Req("POST", "/api/sessions", headers={"Content-Type": JSON}, body=b" " * (SMALL_LIMIT - 2) + b"{}")
    assert env.driver.send(env.small.url, at_limit).status == 200  # an empty JSON object: a new session
    over = Req("POST", "/api/sessions", headers={"Content-Type": JSON}, body=b" " * (SMALL_LIMIT - 1) + b"{}")
    assert env.driver.send(env.small.url, over).status == 413
    # a declared 1 TiB body on the cluster's own server (1 GiB limit) is refused at once: nothing is sent
    head = (f"POST /api/sessions HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: {JSON}\r\n"
            "Content-Length: 1099511627776\r\n\r\n").encode()
    reply = env.driver.raw(env.web, [head], wait=5.0)
    assert reply is not None and reply.status == 413, reply
    assert reply.headers.get("connection") == "close"  # and the connection is not kept to read 1 TiB
    check(SPEC, ERROR, reply.json())


# ---------------------------------------------------------------------- the token
BAD_CREDENTIALS = [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Bearer {TOKEN[:-1]}"},
                   {"Authorization": f"bearer {TOKEN}"}, {"Authorization": f"Basic {TOKEN}"},
                   {"Authorization": f"Bearer {TOKEN}x"}, {"Authorization": "Bearer "}, {"Authorization": TOKEN},
                   {"Authorization": f"Bearer {TOKEN.upper()}"}]
BAD_QUERIES = ["", "token=", "token=wrong", f"token={TOKEN}%00", f"token={TOKEN[:-1]}", f"Token={TOKEN}"]
PUBLIC_TYPES = {"text/html", "text/javascript", "text/css", "image/svg+xml"}
#: what a probe's answer may be, served without the token: that the server is up, nothing else
PROBE = b'{"status": "ok"}'


def is_public(req: Req) -> bool:
    path = urllib.parse.unquote(req.path)
    dashboard = path in ("/", "/index.html", "/favicon.ico") or path.startswith("/static/")
    return req.method in ("GET", "HEAD") and dashboard


def is_probe(req: Req, reply: Reply) -> bool:
    return req.method in ("GET", "HEAD") and req.path == "/api/health" and reply.body in (PROBE, b"")


def refused_before_the_token(call: Call, req: Req, reply: Reply) -> bool:
    """Whether ``reply`` is the guard's refusal, which comes before the token is looked at (see guard.py)."""
    if reply.status == 403 and req.method == "OPTIONS":
        return True
    wanted = BODY_TYPES.get((req.method, call.route or ""))
    sent = req.headers.get("Content-Type", "").split(";")[0].strip().lower()
    return reply.status == 415 and req.body is not None and wanted is not None and sent != wanted


def test_without_the_token_everything_but_the_dashboard_files_is_401(env, caplog, monkeypatch):
    monkeypatch.setattr(web_server, "FAILED_TOKEN_DELAY", 0.0)  # 250 wrong tokens would wait 50 s

    @fuzz(250)
    @given(call=calls(env), credentials=st.sampled_from(BAD_CREDENTIALS), query=st.sampled_from(BAD_QUERIES))
    def one(call: Call, credentials: dict, query: str) -> None:
        req = dataclasses.replace(call.req, headers={**call.req.headers, **credentials}, query=query)
        reply = env.driver.send(env.secured.url, req)
        if reply.status == 400 and http_malformed(req):
            return  # refused by aiohttp's parser before any handler, the token's included
        if refused_before_the_token(call, req, reply):
            assert_error_body(reply, req)
            return
        if reply.status == 200:  # only the dashboard's files and the probe are served without the token, never data
            assert (is_public(req) and reply.content_type in PUBLIC_TYPES) or is_probe(req, reply), (reply, req)
        elif reply.status == 404 and is_public(req):
            assert_error_body(reply, req)
        else:
            assert reply.status == 401, (reply, req)
            assert reply.headers.get("WWW-Authenticate") == "Bearer"
            err = assert_error_body(reply, req)
            assert err is None or err["type"] == "Unauthorized"

    run_fuzz(env, one, caplog)


def test_without_the_token_the_body_is_never_read_nor_unpickled(env):
    garbage = Blob(MAGIC + struct.pack("<II", 5, 0) + b"\x80\x05junk")  # would be a 400: it does not unpickle
    path, binary = f"/api/sessions/{env.sid}/tasks", {"Content-Type": BINARY}
    with_token = env.driver.send(env.secured.url, Req("POST", path, body=garbage,
                                                      headers={"Authorization": f"Bearer {TOKEN}", **binary}))
    assert with_token.status == 400 and "does not unpickle" in with_token.json()["error"]["message"]
    without = env.driver.send(env.secured.url, Req("POST", path, body=garbage, headers=binary))
    assert without.status == 401 and without.json()["error"]["type"] == "Unauthorized"
    # an oversized body without the token: 401, not 413 (the limit is not even looked at)
    big = Req("POST", path, body=Blob(b"x" * (SMALL_LIMIT * 4)), headers=binary)
    assert env.driver.send(env.secured.url, big).status == 401
    # headers that promise a body which never comes: the 401 comes at once, without waiting for it
    head = f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: {BINARY}\r\nContent-Length: 4000\r\n\r\n".encode()
    reply = env.driver.raw(env.secured.url, [head], wait=5.0)
    assert reply is not None and reply.status == 401 and reply.headers.get("connection") == "close", reply
    # with the token the same headers make the server wait for the body
    authed = head.replace(b"\r\n\r\n", f"\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
    assert env.driver.raw(env.secured.url, [authed], wait=0.5) is None


# ---------------------------------------------------------------------- tileables that unpickle but make no sense
ODD_VALUES = [None, 0, -1, "abc", (), (-1, 5), (5,), ((1,),), [1], {"a": 1}, float("nan"), b"\x00"]
TILEABLE_FIELDS = ["shape", "key", "chunks", "nsplits", "output_index", "dtype", "order"]
OP_FIELDS = ["func", "operands", "kwargs", "inputs", "output_keys", "key", "_outputs"]


@st.composite
def broken_tileables(draw: Any) -> Blob:
    """A valid job's frame with some fields of its tileable, or of its operator, set to nonsense."""
    data = pickle.loads(pickle.dumps((mt.ones((5, 5), chunk_size=3) * 4).data))
    for _ in range(draw(st.integers(1, 3))):
        inputs = getattr(data.op, "inputs", None)  # an earlier round may have broken them already
        has_input = isinstance(inputs, (list, tuple)) and len(inputs) > 0
        target = draw(st.sampled_from(["tileable", "op", "input"] if has_input else ["tileable", "op"]))
        obj = {"tileable": data, "op": data.op, "input": inputs[0] if has_input else None}[target]
        name = draw(st.sampled_from(OP_FIELDS if target == "op" else TILEABLE_FIELDS))
        object.__setattr__(obj, name, draw(st.sampled_from(ODD_VALUES)))
    try:
        header = pickle.dumps([data], protocol=5)
    except Exception:  # noqa: BLE001 - some nonsense does not even pickle: send the nonsense we can
        header = pickle.dumps([data.op], protocol=5)
    return Blob(frame(header))


TASK_BUG = ("task service: a tileable with junk chunks/shape makes SessionProcessor._run_task's finally raise in "
            "TaskGraphView.freeze, so the task is never done, and info()/_tileable_progress raise TypeError: "
            "the session's GET .../tasks answers 500 from then on")



def test_tileables_that_unpickle_but_make_no_sense(env):
    """The server trusts pickles (the token guards it), but a nonsensical job must fail, not break the session."""
    sid = env.post_json("/api/sessions", {"session_id": "fuzz-nonsense"})["session_id"]

    @fuzz(100, phases=[Phase.explicit, Phase.generate])  # a failure costs its 2 s wait: no shrinking
    @given(body=broken_tileables())
    def one(body: Blob) -> None:
        req = Req("POST", f"/api/sessions/{sid}/tasks", "wait=2", {"Content-Type": BINARY}, body)
        reply = env.driver.send(env.web, req)
        assert reply.status < 500, (reply.body[:3000], body)
        if reply.status >= 400:
            assert assert_error_body(reply, req)["type"] == "BadRequest", reply.body[:500]
        else:  # accepted as a job: a 5x5 job ends (most likely failed) well within the wait
            check(SPEC, {"$ref": "#/components/schemas/TaskInfo"}, reply.json())
            assert reply.json()["status"] in ("succeeded", "failed"), reply.body[:500]
        listing = env.driver.send(env.web, Req("GET", f"/api/sessions/{sid}/tasks"))
        assert listing.status == 200, listing.body[:500]

    run_fuzz(env, one)



def test_regression_a_job_with_junk_chunks_fails_and_leaves_its_session_usable(env):
    sid = env.post_json("/api/sessions", {"session_id": "fuzz-junk-chunks"})["session_id"]
    data = pickle.loads(pickle.dumps((mt.ones((5, 5), chunk_size=3) * 4).data))
    object.__setattr__(data, "chunks", 5)
    body = env.driver.run(pack_joined([data]))
    start = time.monotonic()
    req = Req("POST", f"/api/sessions/{sid}/tasks", "wait=2", {"Content-Type": BINARY}, body)
    reply = env.driver.send(env.web, req)
    assert reply.status == 200 and reply.json()["status"] == "failed", reply.body[:500]
    assert time.monotonic() - start < 1.5  # it ended: nobody waits out the 2 s
    assert env.driver.send(env.web, Req("GET", f"/api/sessions/{sid}/tasks")).status == 200


def test_regression_a_chunk_function_raising_stop_iteration_fails_its_job(env):
    def stops(row: Any) -> float:
        return next(iter([]))

    df = md.DataFrame(pd.DataFrame({"a": range(4)}), chunk_size=2)
    job = env.cluster.session.execute(df.apply(stops, axis=1, dtypes="float64", output_type="series"), wait=False)
    with pytest.raises(Exception) as raised:
        job.result(timeout=3)
    assert not isinstance(raised.value, TimeoutError), "the job hangs"


FOREIGN = [{"Host": "evil.example"}, {"Host": "rebind.attacker.test:80"}, {"Origin": "http://evil.example"},
           {"Origin": "null"}, {"Origin": "https://127.0.0.1.evil.example"}]


def test_foreign_hosts_and_origins_are_refused_on_every_route(env):
    @fuzz(150)
    @given(call=calls(env), foreign=st.sampled_from(FOREIGN))
    def one(call: Call, foreign: dict) -> None:
        req = dataclasses.replace(call.req, headers={**call.req.headers, **foreign})
        reply = env.driver.send(env.web, req)
        if reply.status == 400 and http_malformed(req):
            return
        assert reply.status == 403, (reply, req)
        err = assert_error_body(reply, req)
        assert err is None or err["type"] == "Forbidden"

    run_fuzz(env, one)


def test_release_names_the_keys_the_session_did_not_hold(env):
    sid = env.post_json("/api/sessions", {"session_id": "fuzz-release"})["session_id"]
    keys = [c.key for r in env.submit(sid, env.valid_frame).results for c in r.chunks]
    reply = env.post_json(f"/api/sessions/{sid}/release", {"keys": [keys[0], "never-held", keys[0]]})
    assert reply == {"released": 1, "not_released": ["never-held", keys[0]]}
    fetch = Req("POST", f"/api/sessions/{sid}/fetch", headers={"Content-Type": JSON},
                body=json.dumps({"keys": keys[:2]}).encode())
    gone = env.driver.send(env.web, fetch)
    assert gone.status == 404 and keys[0] in gone.json()["error"]["message"], gone


# ---------------------------------------------------------------------- many at once
def test_a_burst_of_bad_requests_at_once(env):
    """200 bad requests in flight together: each still gets its 4xx."""
    bodies = [None, b"{", b"[]", DEEP[0], env.valid_frame[:30], b"MRS1" + b"\xff" * 8, b'{"keys": 5}', b"\x00" * 99]
    paths = [f"/api/sessions/{env.sid}/tasks", f"/api/sessions/{env.sid}/fetch",
             f"/api/sessions/{env.sid}/release", "/api/sessions/%00/tasks", f"/api/sessions/{env.sid}/tasks/x"]
    reqs = []
    for i in range(200):
        path, body = paths[i % len(paths)], bodies[i % len(bodies)]
        ctype = BINARY if path.endswith("/tasks") else JSON
        reqs.append(Req("POST", path, "wait=nan" if i % 7 == 0 else "", {"Content-Type": ctype}, body or b"{"))

    async def all_at_once() -> list[Reply]:
        return await asyncio.gather(*(env.driver.asend(env.web, r) for r in reqs))

    since = time.time()
    replies = env.driver.run(all_at_once())
    for req, reply in zip(reqs, replies):
        assert 400 <= reply.status < 500, (reply, req)
        assert_error_body(reply, req)
    assert not env.server_errors(since)


# ---------------------------------------------------------------------- regressions (each was a 500)
def test_regression_deeply_nested_json_is_a_400_not_a_recursion_error(env):
    for body in DEEP:
        req = Req("POST", f"/api/sessions/{env.sid}/release", headers={"Content-Type": JSON}, body=body)
        reply = env.driver.send(env.web, req)
        assert reply.status == 400 and "not valid JSON" in reply.json()["error"]["message"], reply


def test_regression_a_gzip_body_with_its_content_length_is_read_decoded(env):
    body = gzip.compress(json.dumps({"session_id": "fuzz-gzip"}).encode() + b" " * 1000)  # grows when decoded
    headers = {"Content-Encoding": "gzip", "Content-Type": JSON}
    reply = env.driver.send(env.web, Req("POST", "/api/sessions", headers=headers, body=body))
    assert reply.status == 200 and reply.json() == {"session_id": "fuzz-gzip"}, reply


def test_regression_an_undecodable_body_after_the_headers_is_a_400(env):
    """The body comes after the headers (as over a network): aiohttp hands the handler its decoding error."""
    head = (f"POST /api/sessions HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: {JSON}\r\nContent-Encoding: gzip\r\n"
            "Content-Length: 9\r\n\r\n").encode()
    since = time.time()
    reply = env.driver.raw(env.web, [head, b"not gzip!"], pause=0.2)
    assert reply is not None and reply.status == 400, reply
    assert reply.json()["error"]["type"] == "BadRequest" and "content-encoding" in reply.json()["error"]["message"]
    assert not env.server_errors(since)


@pytest.mark.parametrize("framing, partial", [("Content-Length: 100", b'{"keys": '),
                                              # aiohttp stalls a request whose chunk size is garbage: no answer
                                              ("Transfer-Encoding: chunked", b"2\r\n{}\r\nZZ\r\n")])
def test_regression_a_client_leaving_mid_body_is_no_server_error(env, framing, partial):
    head = (f"POST /api/sessions/{env.sid}/release HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: {JSON}\r\n"
            f"{framing}\r\n\r\n").encode()
    since = time.time()
    assert env.driver.raw(env.web, [head, partial], pause=0.1, wait=0.3) is None  # no answer: it waits
    time.sleep(0.5)  # the server notices the closed connection
    assert not env.server_errors(since)


def test_regression_an_answer_given_before_the_body_is_read_closes_the_connection(env):
    """A 405 to a request whose body is broken: kept alive, the connection died after the answer, under the
    client's next request on it."""
    broken = Req("POST", "/api/cluster", headers={"Content-Encoding": "gzip"}, body=b"not gzip!")
    for _ in range(20):
        first = env.driver.send(env.web, broken)
        assert first.status == 405 and first.headers.get("Connection") == "close", first
        assert env.driver.send(env.web, Req("GET", "/api/sessions")).status == 200


# ---------------------------------------------------------------------- last: the cluster came through
def _alive(node: Any) -> bool:
    process = node.process  # LocalCluster keeps its node processes there (forked or spawned)
    return process.is_alive() if hasattr(process, "is_alive") else process.poll() is None


def test_after_all_that_the_cluster_is_alive_serves_and_every_job_was_right(env):
    """Kept last in the file: the long job and the small ones ran while every test above fuzzed."""
    env.jobs.future.result(timeout=120)
    x, got = env.cluster.session.fetch(env.jobs.x, env.jobs.long)
    np.testing.assert_allclose(got, np.linalg.matrix_power(x, env.jobs.STEPS + 1) / 1500.0**env.jobs.STEPS)
    env.jobs.finish()
    assert not env.jobs.errors, env.jobs.errors
    assert env.jobs.done and all(env.jobs.done), env.jobs.done
    assert all(_alive(node) for node in env.cluster._nodes), "a node of the cluster died"
    sessions = env.driver.send(env.web, Req("GET", "/api/sessions"))
    assert sessions.status == 200 and env.sid in {s["session_id"] for s in sessions.json()}
    workers = env.driver.send(env.web, Req("GET", "/api/cluster/workers")).json()
    assert sorted(w["address"] for w in workers if w["state"] == "alive") == sorted(env.workers)
    with mars.new_session(env.web, default=False) as fresh:
        data = np.random.default_rng(3).random((300, 200))
        np.testing.assert_allclose(fresh.run((mt.tensor(data, chunk_size=70) + 1).sum(axis=0)),
                                   (data + 1).sum(axis=0))
