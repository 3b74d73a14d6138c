"""The handlers of the web API: parse and check the request, call the session API, reply.

Every handler finds the session API (``SessionAPI`` or a stand-in with the
same async methods) in the application. Metadata answers are JSON; Python
objects (graphs, TaskInfo, chunk values) travel as binary frames (see
:mod:`.wire`). Errors are raised and turned into JSON by the server's
middleware.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Any, Sequence

from aiohttp import web

from ...core.entity import Tileable, TileableData
from ...oscar.errors import RemoteError
from ...serialization import deserialize, serialize
from ..errors import SessionNotFound
from ..storage.shm import StoredObject
from ..task.api import TaskInfo
from ..task.naming import check_task_name
from .wire import BINARY, JOIN_BELOW, JSON, BadRequest, minus_each, pack, read_body, unpack

API_KEY: web.AppKey[Any] = web.AppKey("mars_session_api", object)
SUPERVISORS_KEY: web.AppKey[Any] = web.AppKey("mars_supervisors", object)
BODY_LIMIT_KEY: web.AppKey[int] = web.AppKey("mars_body_limit", int)

#: ids appear in URL paths and actor uids: keep them to characters that need no escaping
_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")

routes = web.RouteTableDef()
#: the Content-Type of each route's body (the guard refuses any other, before the body is read)
BODY_TYPES: dict[tuple[str, str], str] = {
    ("POST", "/api/sessions"): JSON,
    ("POST", "/api/sessions/{sid}/tasks"): BINARY,
    ("POST", "/api/sessions/{sid}/fetch"): JSON,
    ("POST", "/api/sessions/{sid}/release"): JSON,
    ("POST", "/api/sessions/{sid}/upload"): BINARY,
}
#: paths answered without the cluster's token: a liveness or readiness probe has none, and they reveal nothing
PROBE_PATHS = frozenset({"/api/health"})


def is_probe(request: web.Request) -> bool:
    """Whether ``request`` is a probe's (served to anyone: the answer says only that the server is up)."""
    return request.method in ("GET", "HEAD") and request.path in PROBE_PATHS


# ---------------------------------------------------------------------- request parts
def _api(request: web.Request) -> Any:
    return request.app[API_KEY]


async def _body(request: web.Request) -> bytearray:
    # aiohttp hands over a Content-Encoding's decoded bytes, which its Content-Length does not count
    encoded = request.headers.get("Content-Encoding", "identity").strip().lower() != "identity"
    try:
        return await read_body(request.content, None if encoded else request.content_length,
                               request.app[BODY_LIMIT_KEY])
    except web.RequestPayloadError as e:  # a bad chunk size, or a body that its Content-Encoding cannot decode
        reason = getattr(e.__cause__, "message", None) or str(e)
        raise BadRequest(f"request body cannot be read: {reason}") from None
    except ConnectionResetError:
        raise BadRequest("the client closed the connection before the request body ended") from None


async def _json_body(request: web.Request, required: bool = True) -> dict:
    raw = await _body(request)
    if not raw.strip():
        if required:
            raise BadRequest(f"{request.method} {request.path} needs a JSON object body")
        return {}
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError) as e:  # RecursionError: nested deeper than the parser goes
        raise BadRequest(f"request body is not valid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise BadRequest(f"request body must be a JSON object, got a JSON {type(obj).__name__}")
    return obj


def _keys(body: dict) -> list[str]:
    keys = body.get("keys")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise BadRequest(f'body must be {{"keys": [chunk keys as strings]}}, got keys={str(keys)[:100]}')
    return keys


def _wait(request: web.Request) -> float:
    raw = request.query.get("wait")
    if raw is None:
        return 0.0
    try:
        wait = float(raw)
    except ValueError:
        raise BadRequest(f"wait must be a number of seconds, got {raw!r}") from None
    if not 0 <= wait < math.inf:
        raise BadRequest(f"wait must be a finite number of seconds >= 0, got {raw!r}")
    return wait


def _tileables(obj: Any) -> list[TileableData]:
    if not isinstance(obj, (list, tuple)) or not obj:
        raise BadRequest(f"a task body must be a non-empty list of tileables, got {type(obj).__name__}")
    datas = [t.data if isinstance(t, Tileable) else t for t in obj]
    bad = sorted({type(d).__name__ for d in datas if not isinstance(d, TileableData)})
    if bad:
        raise BadRequest(f"a task body must hold only tileables, got {', '.join(bad)}")
    return datas


def _wants_binary(request: web.Request) -> bool:
    return BINARY in request.headers.get("Accept", "")


# ---------------------------------------------------------------------- replies
async def _binary(request: web.Request, obj: Any) -> web.StreamResponse:
    """``obj`` as a binary frame; large buffers are written as they are, not joined."""
    parts, size = await pack(obj)
    if size < JOIN_BELOW:
        return web.Response(body=b"".join(parts), content_type=BINARY)
    resp = web.StreamResponse(headers={"Content-Type": BINARY})
    resp.content_length = size
    await resp.prepare(request)
    for part in parts:
        await resp.write(part)
    await resp.write_eof()
    return resp


def _sendable(info: TaskInfo) -> TaskInfo:
    """``info`` whose error survives pickling; an error that does not is described instead."""
    if info.error is None:
        return info
    try:
        deserialize(*serialize(info.error))
        return info
    except Exception as e:
        name = f"{type(info.error).__module__}.{type(info.error).__qualname__}"
        error = RemoteError(f"the task raised {name}: {info.error}; it cannot be sent back as itself ({e})")
        return dataclasses.replace(info, error=error)


async def _tasks_reply(request: web.Request, infos: TaskInfo | Sequence[TaskInfo]) -> web.StreamResponse:
    if isinstance(infos, TaskInfo):
        if _wants_binary(request):
            return await _binary(request, _sendable(infos))
        return web.json_response(infos.to_json())
    if _wants_binary(request):
        return await _binary(request, [_sendable(i) for i in infos])
    return web.json_response([i.to_json() for i in infos])


# ---------------------------------------------------------------------- sessions
@routes.post("/api/sessions")
async def create_session(request: web.Request) -> web.StreamResponse:
    body = await _json_body(request, required=False)
    session_id = body.get("session_id")
    if session_id is not None and not (isinstance(session_id, str) and _ID.fullmatch(session_id)):
        raise BadRequest(f"session_id must be 1-128 characters of A-Z a-z 0-9 . _ -, got {session_id!r}")
    return web.json_response({"session_id": await _api(request).create_session(session_id)})


@routes.get("/api/sessions")
async def list_sessions(request: web.Request) -> web.StreamResponse:
    return web.json_response(await _api(request).list_sessions())


@routes.get("/api/sessions/{sid}")
async def get_session(request: web.Request) -> web.StreamResponse:
    sid = request.match_info["sid"]
    if not await _api(request).has_session(sid):
        raise SessionNotFound.named(sid)
    return web.json_response({"session_id": sid})


@routes.delete("/api/sessions/{sid}")
async def delete_session(request: web.Request) -> web.StreamResponse:
    sid = request.match_info["sid"]
    await _api(request).delete_session(sid)
    return web.json_response({"session_id": sid})


# ---------------------------------------------------------------------- tasks
@routes.post("/api/sessions/{sid}/tasks")
async def submit(request: web.Request) -> web.StreamResponse:
    sid = request.match_info["sid"]
    wait = _wait(request)  # checked before anything runs
    try:
        name = check_task_name(request.query.get("name"))
    except ValueError as e:
        raise BadRequest(str(e)) from None
    tileables = _tileables(await unpack(await _body(request)))
    api = _api(request)
    task_id = await api.submit(sid, tileables, name)
    return await _tasks_reply(request, await api.get_task(sid, task_id, wait))


@routes.get("/api/sessions/{sid}/tasks")
async def list_tasks(request: web.Request) -> web.StreamResponse:
    return await _tasks_reply(request, await _api(request).list_tasks(request.match_info["sid"]))


@routes.get("/api/sessions/{sid}/tasks/{tid}")
async def get_task(request: web.Request) -> web.StreamResponse:
    sid, tid = request.match_info["sid"], request.match_info["tid"]
    return await _tasks_reply(request, await _api(request).get_task(sid, tid, _wait(request)))


@routes.get("/api/sessions/{sid}/tasks/{tid}/graph")
async def task_graph(request: web.Request) -> web.StreamResponse:
    sid, tid = request.match_info["sid"], request.match_info["tid"]
    level = request.query.get("level", "tileable")
    if level not in ("tileable", "subtask"):
        raise BadRequest(f"level must be 'tileable' or 'subtask', got {level!r}")
    return web.json_response(await _api(request).get_task_graph(sid, tid, level))


@routes.post("/api/sessions/{sid}/tasks/{tid}/cancel")
async def cancel_task(request: web.Request) -> web.StreamResponse:
    sid, tid = request.match_info["sid"], request.match_info["tid"]
    await _api(request).cancel_task(sid, tid)
    return web.json_response({"task_id": tid})


# ---------------------------------------------------------------------- data
@routes.post("/api/sessions/{sid}/fetch")
async def fetch(request: web.Request) -> web.StreamResponse:
    body = await _json_body(request)
    keys, sid, api = _keys(body), request.match_info["sid"], _api(request)
    segments, skip = body.get("segments", False), body.get("skip_prefixes", [])
    if not isinstance(segments, bool):
        raise BadRequest(f"segments must be true or false, got {str(segments)[:100]}")
    if not isinstance(skip, list) or not all(isinstance(p, str) for p in skip):
        raise BadRequest(f"skip_prefixes must be a list of segment prefixes, got {str(skip)[:100]}")
    if not segments:
        return await _binary(request, await api.fetch(sid, keys))
    return await _binary(request, await _described(api, sid, keys, frozenset(skip)))


async def _described(api: Any, sid: str, keys: list[str], skip: frozenset[str]) -> dict:
    """``{"values": [...], "segments": {position: StoredObject}}``: for a client on the workers' host, what
    they hold in shared memory as descriptors (it maps them itself), the rest as values (None at the
    positions of segments). Segments whose prefix is in ``skip`` (the client cannot map them) come as values."""
    values: list[Any] = [None] * len(keys)
    segments: dict[int, StoredObject] = {}
    rest: list[int] = []
    for i, d in enumerate(await api.describe(sid, keys)):
        if d is not None and d.inline:
            values[i] = d.value
        elif d is None or d.shm_name.rpartition("-")[0] in skip:
            rest.append(i)
        else:
            segments[i] = d
    if rest:
        for i, value in zip(rest, await api.fetch(sid, [keys[i] for i in rest])):
            values[i] = value
    return {"values": values, "segments": segments}


@routes.post("/api/sessions/{sid}/release")
async def release(request: web.Request) -> web.StreamResponse:
    keys = _keys(await _json_body(request))
    released = await _api(request).release(request.match_info["sid"], keys)
    return web.json_response({"released": len(released), "not_released": minus_each(keys, released)})


@routes.get("/api/sessions/{sid}/upload")
async def upload_targets(request: web.Request) -> web.StreamResponse:
    targets = await _api(request).upload_targets(request.match_info["sid"])
    return web.json_response({"workers": [dataclasses.asdict(t) for t in targets]})


@routes.post("/api/sessions/{sid}/upload")
async def upload(request: web.Request) -> web.StreamResponse:
    worker, kind, chunks = _upload_body(await unpack(await _body(request)))
    api = _api(request)
    if kind == "stored":
        await api.adopt_stored(request.match_info["sid"], worker, chunks)
    else:
        await api.put_chunks(request.match_info["sid"], worker, chunks)
    return web.json_response({"n_chunks": len(chunks)})


def _upload_body(body: Any) -> tuple[str, str, list]:
    """``(worker, "stored" or "values", chunks)`` from an upload's body (see docs/openapi.yaml)."""
    if not isinstance(body, dict) or not isinstance(body.get("worker"), str) or len(body) != 2:
        raise BadRequest('an upload body is {"worker": address, "stored" or "values": [(key, shape, ...)]}')
    kind = next(k for k in body if k != "worker")
    chunks = body[kind]
    if kind not in ("stored", "values") or not isinstance(chunks, list):
        raise BadRequest(f'an upload body has "stored" or "values" beside "worker", got {kind!r}')
    for chunk in chunks:
        if not (isinstance(chunk, tuple) and len(chunk) == 3 and isinstance(chunk[0], str)
                and isinstance(chunk[1], tuple)):
            raise BadRequest(f"each uploaded chunk is (key, shape tuple, {kind[:-1]}), got {str(chunk)[:100]}")
        if kind == "stored" and not isinstance(chunk[2], StoredObject):
            raise BadRequest(f"a stored chunk is described by a StoredObject, got {type(chunk[2]).__name__}")
    return body["worker"], kind, chunks


# ---------------------------------------------------------------------- cluster
@routes.get("/api/health")
async def health(request: web.Request) -> web.StreamResponse:
    # answers while this process serves: it asks no supervisor, so a probe of mars-web does not
    # restart it while its supervisors are away (workers and clients retry those themselves)
    return web.json_response({"status": "ok"})


@routes.get("/api/cluster/workers")
async def workers(request: web.Request) -> web.StreamResponse:
    return web.json_response(await _api(request).get_workers())


@routes.get("/api/cluster/supervisors")
async def supervisors(request: web.Request) -> web.StreamResponse:
    return web.json_response(list(request.app[SUPERVISORS_KEY]))


@routes.get("/api/cluster")
async def cluster(request: web.Request) -> web.StreamResponse:
    return web.json_response(await _api(request).get_cluster())


@routes.get("/api/cluster/workers/{address}")
async def worker(request: web.Request) -> web.StreamResponse:
    return web.json_response(await _api(request).get_worker(request.match_info["address"]))


def query_limit(request: web.Request, default: int = 200, most: int = 10_000, least: int = 0,
                what: str = "records") -> int:
    """The ``limit=`` query: a whole number of ``what`` in ``[least, most]`` (``default`` when absent)."""
    raw = request.query.get("limit", str(default))
    try:
        limit = int(raw)
    except ValueError:
        raise BadRequest(f"limit must be a whole number of {what}, got {raw!r}") from None
    if not least <= limit <= most:
        raise BadRequest(f"limit must be between {least} and {most}, got {limit}")
    return limit


@routes.get("/api/cluster/{kind:workers|supervisors}/{address}/logs")
async def node_logs(request: web.Request) -> web.StreamResponse:
    kind, address = request.match_info["kind"][:-1], request.match_info["address"]
    return web.json_response(await _api(request).get_node_logs(kind, address, query_limit(request)))


@routes.get("/api/cluster/{kind:workers|supervisors}/{address}/stacks")
async def node_stacks(request: web.Request) -> web.StreamResponse:
    kind, address = request.match_info["kind"][:-1], request.match_info["address"]
    return web.json_response(await _api(request).get_node_stacks(kind, address))
