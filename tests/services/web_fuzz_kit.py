"""Requests, answers and strategies for fuzzing the web API (used by test_web_fuzz.py).

``Req``/``Reply`` are one HTTP exchange, sent by ``Driver`` (an aiohttp client on
a loop thread of its own) or as raw bytes; ``assert_answer`` says what a right
answer is; the strategies build odd paths, queries, JSON bodies and binary
frames (docs/web-api.md) truncated or lying. Strategies that need the running
cluster's ids take the test's ``Env``.
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
import urllib.parse
from collections.abc import Callable
from typing import Any

import aiohttp
import numpy as np
import yarl
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import mars.tensor as mt
from mars.services.web.wire import BINARY, MAGIC, STATUS_OF

from .openapi_check import check, load_spec

EXAMPLES = int(os.environ.get("MARS_FUZZ_EXAMPLES", "0"))

SPEC = load_spec()
ERROR = {"$ref": "#/components/schemas/Error"}
TOKEN = "fuzz-token-8f3a"
SMALL_LIMIT = 4096  # the body limit of the small servers
HOST = "127.0.0.1"  # the Host of raw requests: the server takes IP literals (guard.py)
JSON = "application/json"
_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def fuzz(n: int, **more: Any) -> Callable:
    """Hypothesis settings: ``n`` examples (or MARS_FUZZ_EXAMPLES), reproducible, no deadline."""
    return settings(max_examples=EXAMPLES or n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck), **more)


# ---------------------------------------------------------------------- requests and answers
class Blob(bytes):
    """Bytes that print short: hypothesis shows failing examples, and some bodies are 200 KB."""

    def __repr__(self) -> str:
        return f"Blob({len(self)} bytes: {bytes(self[:80])!r}...)" if len(self) > 100 else f"Blob({bytes(self)!r})"


@dataclasses.dataclass
class Req:
    method: str
    path: str  # percent-encoded, as it goes on the request line
    query: str = ""
    headers: dict = dataclasses.field(default_factory=dict)
    body: bytes | None = None
    chunked: bool = False
    valid_body: bool = False  # the strategy built a body that the route accepts

    def __repr__(self) -> str:
        body = None if self.body is None else self.body[:120]
        return (f"Req({self.method} {self.path[:200]}?{self.query[:100]} headers={self.headers} "
                f"chunked={self.chunked} body[{0 if self.body is None else len(self.body)}]={body!r})")


@dataclasses.dataclass
class Reply:
    status: int
    content_type: str
    headers: Any
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Driver:
    """An event loop thread of this test process with one aiohttp client session.

    ``tokens`` maps a server's URL to its token, sent with every request to it
    that carries no Authorization header of its own.
    """

    def __init__(self, tokens: dict[str, str | None] | None = None) -> None:
        self.tokens = {base: token for base, token in (tokens or {}).items() if token}
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="fuzz-driver")
        self._thread.start()
        self.http: aiohttp.ClientSession = self.run(self._open())
        self.sent: dict[str, int] = {}  # requests sent, by test (shown with -s)
        self.statuses: dict[int, int] = {}  # answers, by status

    async def _open(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))

    def run(self, coro: Any, timeout: float = 90) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def send(self, base: str, req: Req) -> Reply:
        return self.run(self.asend(base, req))

    async def asend(self, base: str, req: Req) -> Reply:
        self._count()
        url = yarl.URL(base + req.path + (f"?{req.query}" if req.query else ""), encoded=True)
        headers = req.headers
        if base in self.tokens and "Authorization" not in headers:
            headers = {**headers, "Authorization": f"Bearer {self.tokens[base]}"}
        async with self.http.request(req.method, url, data=req.body, headers=headers,
                                     chunked=req.chunked or None, skip_auto_headers=["Content-Type"],
                                     allow_redirects=False) as resp:
            self.statuses[resp.status] = self.statuses.get(resp.status, 0) + 1
            return Reply(resp.status, resp.content_type, resp.headers, await resp.read())

    def raw(self, url: str, parts: list[bytes], pause: float = 0.0, wait: float = 5.0) -> Reply | None:
        """Send ``parts`` as they are on a fresh connection; the answer, if one came within ``wait`` s."""
        self._count()
        token = self.tokens.get(url)
        if token and parts and b"\r\n" in parts[0] and b"\nAuthorization:" not in parts[0]:
            line, _, rest = parts[0].partition(b"\r\n")  # the header goes right after the request line
            parts = [line + f"\r\nAuthorization: Bearer {token}\r\n".encode() + rest, *parts[1:]]
        return parse_raw(self.run(raw_exchange(url, parts, pause, wait)))

    def _count(self) -> None:
        test = os.environ.get("PYTEST_CURRENT_TEST", "?").split("::")[-1].split(" ")[0]
        self.sent[test] = self.sent.get(test, 0) + 1

    def close(self) -> None:
        from mars.oscar import close_connections

        async def _close() -> None:
            await self.http.close()
            close_connections()

        self.run(_close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


# ---------------------------------------------------------------------- what a right answer is
def http_malformed(req: Req) -> bool:
    """Whether aiohttp's HTTP parser may refuse ``req`` before the application sees it.

    It answers those itself, 400 in plain text: a request line over 8190 bytes, or a body that its
    Content-Encoding does not decode when the body comes in the same packet as the headers.
    """
    line = len(req.method) + len(req.path) + len(req.query) + 12
    encoding = req.headers.get("Content-Encoding", "identity").lower()
    return line > 8190 or (encoding not in ("identity", "x-unknown") and not _decodes_as(req.body, encoding))


def _decodes_as(body: bytes | None, encoding: str) -> bool:
    if encoding != "gzip":
        return False
    try:
        gzip.decompress(body or b"")
    except (OSError, EOFError):
        return False
    return True


def assert_error_body(reply: Reply, req: Req) -> dict | None:
    """A 4xx answer is the API's JSON error format, its ``type`` agreeing with its status."""
    if reply.content_type == "text/plain" and reply.status == 400 and http_malformed(req):
        return None  # aiohttp's own answer to a request it could not parse (see http_malformed)
    assert reply.content_type == JSON, f"{reply.status} as {reply.content_type!r}: {reply.body[:300]!r} to {req}"
    if req.method == "HEAD":  # no body comes back to a HEAD
        return None
    body = reply.json()
    check(SPEC, ERROR, body)
    err = body["error"]
    if err["type"] in STATUS_OF:
        assert STATUS_OF[err["type"]] == reply.status, (reply.status, err, req)
    if err["type"] in ("BadRequest", "Unauthorized", "Forbidden", "PayloadTooLarge", "UnsupportedMediaType"):
        assert err["traceback"] == "", f"a caller's mistake came back with the server's stack: {err}"
    return err


def assert_answer(reply: Reply, req: Req, ok: Callable[[Reply], bool]) -> None:
    """Never 5xx; 4xx in the error format; a 2xx only where ``ok`` says the request was valid."""
    assert reply.status < 500, f"server error {reply.status} {reply.body[:2000]!r} for {req}"
    assert reply.status >= 200 and not 300 <= reply.status < 400, (reply.status, req)
    if reply.status >= 400:
        assert_error_body(reply, req)
    else:
        assert ok(reply), f"{reply.status} {reply.body[:300]!r} to a request that is not valid: {req}"


def query_value(req: Req, name: str) -> str | None:
    """What the server reads for a query parameter (aiohttp parses queries with yarl)."""
    return yarl.URL("/?" + req.query).query.get(name) if req.query else None


def wait_ok(req: Req) -> bool:
    raw = query_value(req, "wait")
    try:
        return raw is None or 0 <= float(raw) < float("inf")
    except ValueError:
        return False


def limit_ok(req: Req) -> bool:
    raw = query_value(req, "limit")
    try:
        return raw is None or 0 <= int(raw) <= 10_000
    except ValueError:
        return False


def since_ok(req: Req) -> bool:
    """``since=`` of the observability routes: a finite unix time >= 0, or absent."""
    raw = query_value(req, "since")
    try:
        return raw is None or 0 <= float(raw) < float("inf")
    except ValueError:
        return False


def stream_limit_ok(req: Req, most: int) -> bool:
    """``limit=`` of the task stream: a whole number of events in [1, most], or absent."""
    raw = query_value(req, "limit")
    try:
        return raw is None or 1 <= int(raw) <= most
    except ValueError:
        return False


def could_be_id(text: str) -> bool:
    return 1 <= len(text) <= 128 and set(text) <= _ID_CHARS


# ---------------------------------------------------------------------- strategies: paths and queries
# aiohttp's parser refuses methods it does not know (FOO) itself: test_raw_http_framing sends those
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE"]
ODD_SEGMENTS = ["", ".", "..", "%2e%2e", "%2E%2E%2F%2E%2E", "%2F", "a%2Fb", "%00", "%ZZ", "%", "%C0%AF", "%FF%FE",
                "%E2%80%AE", "~", "a" * 300, "b" * 4000, "null", "0", "-1", "%20", "+", "%2B", "%25", "x;y=z"]
EXTRA_PATHS = ["/api", "/api/", "/api/sessions/", "/api/sessions//tasks", "//api/sessions", "/api/sessions/x/y/z/w",
               "/static/", "/static/../api/sessions", "/static/%2e%2e/api/sessions", "/api/cluster/nodes/x/logs",
               "/api/sessions/fuzz-session/tasks/%2e%2e/cancel", "/api/./sessions", "/API/SESSIONS", "/index.htm"]
QUERY_NAMES = ["wait", "level", "limit", "token", "x", ""]
QUERY_VALUES = ["nan", "NaN", "inf", "-inf", "Infinity", "-1", "0", "1e308", "1e309", "1e999", "0x10", "", "1_0",
                "%201", "abc", "%00", "0.001", "10001", "10000", "-0", "1e-320", "tileable", "subtask", "SUBTASK",
                "%FF", "9" * 400, "[]", "%E2%82%AC", "+1", "1.5", "true"]


def quoted(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def segments(env: Any) -> st.SearchStrategy[str]:
    known = [env.sid, env.tid, *env.keys, *(quoted(a) for a in env.workers + env.supervisors), "workers"]
    return st.one_of(st.sampled_from(ODD_SEGMENTS), st.sampled_from(known), st.text(max_size=40).map(quoted),
                     st.text(alphabet=sorted(_ID_CHARS), min_size=1, max_size=12))


def queries() -> st.SearchStrategy[str]:
    name = st.one_of(st.sampled_from(QUERY_NAMES), st.text(max_size=6).map(quoted))
    value = st.one_of(st.sampled_from(QUERY_VALUES), st.text(max_size=12).map(quoted))
    pairs = st.lists(st.tuples(name, value), max_size=3).map(lambda ps: "&".join(f"{k}={v}" for k, v in ps))
    return st.one_of(pairs, st.sampled_from(["", "&&", "=", "wait", "wait=1&wait=x", "%", "?", "limit=5&limit=-5"]))


@dataclasses.dataclass
class Call:
    """A request, with the route template it was made from and its path parameters as the server decodes them."""

    req: Req
    route: str | None
    params: dict


@st.composite
def calls(draw: Any, env: Any, methods: list[str] | None = None, bodies: st.SearchStrategy | None = None) -> Call:
    method = draw(st.sampled_from(methods or METHODS))
    route = draw(st.sampled_from([*SPEC["paths"], None]))
    params: dict = {}
    if route is None:
        path = draw(st.sampled_from(EXTRA_PATHS))
    else:
        path = route
        for name in ("sid", "tid", "address", "name"):
            if "{" + name + "}" in path:
                raw = draw(segments(env))
                if method == "DELETE" and raw == env.sid:  # keep the fuzz session: it holds the known task
                    raw = "deleted-" + raw
                params[name] = urllib.parse.unquote(raw)
                path = path.replace("{" + name + "}", raw)
    body, valid = draw(bodies if bodies is not None else any_body(env))
    headers = {"Content-Type": draw(st.sampled_from([JSON, BINARY, "text/plain"]))} if body is not None else {}
    if draw(st.booleans()):
        headers["Accept"] = BINARY
    return Call(Req(method, path, draw(queries()), headers, body, valid_body=valid), route, params)


# ---------------------------------------------------------------------- strategies: bodies
JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20))
JSON_VALUES = st.recursive(JSON_LEAVES, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c,
                                                                                          max_size=4), max_leaves=10)
DEEP = [Blob(b"[" * 100_000 + b"]" * 100_000), Blob(b'{"keys":' * 50_000 + b"1" + b"}" * 50_000),
        Blob(b"[" * 100_000)]
ODD_JSON = [b"", b"   ", b"null", b"[]", b"{}", b'"keys"', b"\xef\xbb\xbf{}", b'{"keys": ["\xff"]}', b"\x00" * 64,
            '{"keys": ["\u00e9"]}'.encode("utf-16"), b'{"keys": NaN}', b'{"keys": [1e999]}', b'{"keys": "abc"}',
            Blob(b'{"session_id": ' + b"9" * 5000 + b"}"), b'{"keys": ["\\ud800"]}', b'{"session_id": "\\ud800"}',
            b'{"session_id": "' + b"a" * 129 + b'"}', b'{"keys": {"a": 1}}', b'{"keys": [["a"]]}', *DEEP]


def _huge_keys(n: int) -> bytes:
    return Blob(json.dumps({"keys": [f"k{i}" for i in range(n)]}).encode())


def json_bodies() -> st.SearchStrategy[tuple[bytes, bool]]:
    """JSON bodies of wrong shapes and types, truncated, deep, huge; ``valid`` is decided by the route."""
    shaped = st.one_of(JSON_VALUES, st.fixed_dictionaries({"keys": JSON_VALUES}),
                       st.fixed_dictionaries({"session_id": JSON_VALUES}),
                       st.fixed_dictionaries({"keys": st.lists(st.text(max_size=10), max_size=5)}),
                       st.fixed_dictionaries({"session_id": st.text(alphabet=sorted(_ID_CHARS), max_size=130)}))
    dumped = shaped.map(lambda v: json.dumps(v).encode())
    truncated = st.tuples(dumped, st.integers(0, 400)).map(lambda t: t[0][: t[1]])
    huge = st.integers(1_000, 60_000).map(_huge_keys)
    return st.one_of(dumped, truncated, st.sampled_from(ODD_JSON), huge).map(lambda b: (b, False))


def frame(header: bytes, buffers: tuple = (), *, count: int | None = None, header_len: int | None = None,
          sizes: list[int] | None = None) -> bytes:
    """A binary body as docs/web-api.md lays it out, with any field free to lie."""
    sizes = [len(b) for b in buffers] if sizes is None else sizes
    out = bytearray(struct.pack("<4sII", MAGIC, len(header) if header_len is None else header_len,
                                len(sizes) if count is None else count))
    for size in sizes:
        out += struct.pack("<Q", size)
    out += header
    for buf in buffers:
        out += bytes(-len(out) % 64) + buf
    return bytes(out)


def boundaries(body: bytes) -> list[int]:
    """Every place where a valid frame's parts start or end (and one byte either side)."""
    header_len, count = struct.unpack_from("<II", body, 4)
    sizes = [struct.unpack_from("<Q", body, 12 + 8 * i)[0] for i in range(count)]
    marks, offset = [0, 4, 8, 12], 12 + 8 * count + header_len
    marks += [12 + 8 * i for i in range(count + 1)] + [offset]
    for size in sizes:
        offset += -offset % 64
        marks += [offset, offset + size]
        offset += size
    return sorted({m + d for m in marks for d in (-1, 0, 1) if 0 <= m + d < len(body)})


NOT_TILEABLES = [1, "abc", None, [], [1, 2], [None], {"a": 1}, (), [np.arange(3)], np.arange(3), [b"x"],
                 [[mt.ones(2).data]], {mt.ones(2).data.key: 1}, [mt.ones(2).data.chunks]]
LIES = [0, 1, 2, 63, 64, 255, 1 << 16, 1 << 31, (1 << 32) - 1]
SIZE_LIES = [0, 1, 63, 64, 1 << 20, 1 << 63, (1 << 64) - 1]


def frame_bodies(env: Any) -> st.SearchStrategy[tuple[bytes, bool]]:
    """Binary bodies: valid frames truncated anywhere, lying frames, garbage and foreign pickles."""
    frames = [env.valid_frame, env.frame_with_buffer]
    cut = st.sampled_from(frames).flatmap(lambda f: st.tuples(st.just(f), st.sampled_from(boundaries(f))
                                                              | st.integers(0, len(f) - 1)))
    truncated = cut.map(lambda t: (t[0][: t[1]], False))
    whole = st.sampled_from(frames).map(lambda f: (f, True))
    trailing = st.tuples(st.sampled_from(frames), st.binary(max_size=100)).map(lambda t: (t[0] + t[1], True))
    header = env.valid_frame[12:]
    lying = st.builds(lambda c, h, s: frame(header, count=c, header_len=h, sizes=s),
                      st.sampled_from(LIES) | st.none(), st.sampled_from(LIES + [len(header) + 1]) | st.none(),
                      st.lists(st.sampled_from(SIZE_LIES), max_size=4) | st.none()).map(lambda b: (b, env.decodes(b)))
    garbage = st.one_of(st.binary(max_size=300), st.binary(max_size=200).map(lambda b: b"\x80\x05" + b),
                        st.sampled_from([pickle.dumps(v, protocol=5) for v in NOT_TILEABLES]),
                        st.just(_out_of_band_pickle()))
    foreign = st.one_of(garbage.map(frame), st.binary(max_size=200),
                        st.sampled_from([b"MRS2" + env.valid_frame[4:], b"mrs1" + env.valid_frame[4:], b"MRS",
                                         env.valid_frame[:4]]))
    return st.one_of(truncated, whole, trailing, lying, foreign.map(lambda b: (b, False)))


def _out_of_band_pickle() -> bytes:
    """A pickle that asks for an out-of-band buffer (sent in a frame that declares none)."""
    return pickle.dumps(pickle.PickleBuffer(b"abc"), protocol=5, buffer_callback=lambda b: False)


def any_body(env: Any) -> st.SearchStrategy[tuple[bytes | None, bool]]:
    return st.one_of(st.just((None, False)), st.binary(max_size=200).map(lambda b: (b, False)), json_bodies(),
                     frame_bodies(env))


def json_body(req: Req) -> Any:
    """The body as the server's JSON reader sees it, or None where it would refuse it."""
    raw = req.body or b""
    try:
        raw = gzip.decompress(raw) if req.headers.get("Content-Encoding", "").lower() == "gzip" else raw
    except (OSError, EOFError):
        return None
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def keys_of(req: Req) -> list[str] | None:
    body = json_body(req)
    keys = body.get("keys") if isinstance(body, dict) else None
    return keys if isinstance(keys, list) and all(isinstance(k, str) for k in keys) else None


# ---------------------------------------------------------------------- raw HTTP framing
async def raw_exchange(url: str, parts: list[bytes], pause: float = 0.0, wait: float = 5.0) -> bytes:
    """Send ``parts`` on a fresh connection (``pause`` seconds apart); what comes back until a whole answer
    is in, the server closes, or ``wait`` seconds are up."""
    reader, writer = await asyncio.open_connection(yarl.URL(url).host, yarl.URL(url).port)
    data = b""
    try:
        for i, part in enumerate(parts):
            if i and pause:
                await asyncio.sleep(pause)
            writer.write(part)
            await writer.drain()
        deadline = asyncio.get_running_loop().time() + wait
        while (left := deadline - asyncio.get_running_loop().time()) > 0:
            chunk = await asyncio.wait_for(reader.read(1 << 16), left)
            if not chunk:
                break
            data += chunk
            if _answered(data):
                break
    except (ConnectionError, asyncio.TimeoutError):
        pass  # the server closed mid-way, or kept the connection open: what came is the answer
    finally:
        writer.close()
    return data


def _answered(data: bytes) -> bool:
    """Whether ``data`` holds an answer's headers and all the body they announce (aiohttp always sends a length)."""
    reply = parse_raw(data) if b"\r\n\r\n" in data else None
    if reply is None or "content-length" not in reply.headers:
        return False
    return len(reply.body) >= int(reply.headers["content-length"])


def parse_raw(data: bytes) -> Reply | None:
    """The first HTTP answer in ``data``, or None when nothing came."""
    while data.startswith(b"HTTP/1.1 100 "):  # "100 Continue" before the answer to an Expect header
        data = data.partition(b"\r\n\r\n")[2]
    if not data:
        return None
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return Reply(status, headers.get("content-type", "").split(";")[0], headers, body)
