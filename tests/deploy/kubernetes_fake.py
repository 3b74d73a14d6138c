"""A fake Kubernetes API server whose pods are local processes, for ``mars.deploy.kubernetes.new_cluster``'s tests.

It serves, on a thread, the REST endpoints the official client calls, with
JSON shaped like the real API's (so the client's models deserialise it):
namespaces, nodes (one, at 127.0.0.1), secrets, configmaps, services, pods
(list by label selector, read, log, delete), and apps/v1 deployments and
statefulsets (create, list, read, merge-patch, delete). Its controllers keep
a workload's pods at its replicas and delete what a deleted object owned.

A pod is the process of its (single) container: ``python`` is this
interpreter for our image (``images`` says which exist), the environment is resolved as the kubelet would (values with
``$(VAR)``, ``fieldRef``, ``secretKeyRef`` from the stored Secret,
``resourceFieldRef``). All pods live on 127.0.0.1, so the fake stands in
for the pod network:

- each ``containerPort`` gets a free port of this machine; an environment
  value equal to a container port becomes that port (the manifests pass
  their ports in ``MARS_BIND_PORT`` and the like);
- a pod's DNS name (``<hostname>.<subdomain>.<ns>.svc[.cluster.local]``, what
  a StatefulSet and its headless Service give) becomes 127.0.0.1, and with a
  port, 127.0.0.1 and that pod's port;
- a mounted volume is a directory of the test's (a ConfigMap's keys as
  files), and its mount path, in the environment or the arguments, that
  directory;
- a ``NodePort`` Service listens on 127.0.0.1 at its node port and forwards
  each connection to a ready pod it selects.

Readiness probes run (``httpGet``, ``tcpSocket``, ``exec``) and set the pod's
``Ready`` condition; a process that exits shows as a terminated container.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import datetime
import itertools
import math
import os
import pathlib
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import psutil
from aiohttp import web

from mars.deploy.kubernetes.objects import DEFAULT_IMAGE, parse_quantity

CORE = {"namespaces": "Namespace", "secrets": "Secret", "configmaps": "ConfigMap", "services": "Service",
        "pods": "Pod"}
APPS = {"deployments": "Deployment", "statefulsets": "StatefulSet"}
_ids = itertools.count(1)
#: our image runs this interpreter; the bare Python image, one without pymars (no site-packages)
IMAGES = {DEFAULT_IMAGE: [sys.executable], "python:3.12-slim": [sys.executable, "-I", "-S"]}


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(code: int, reason: str, message: str) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}
    return web.json_response(body, status=code)


def _matches(labels: dict[str, str], selector: str | None) -> bool:
    for term in filter(None, (selector or "").split(",")):
        key, _, value = term.partition("=")
        if labels.get(key.strip()) != value.strip().lstrip("="):
            return False
    return True


def _merge(target: dict, patch: dict) -> None:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


class Pod:
    """The process of a pod's container, and what the pod network maps for it."""

    def __init__(self, fake: FakeKubernetes, obj: dict[str, Any]):
        self.fake = fake
        self.obj = obj
        self.name, self.namespace = obj["metadata"]["name"], obj["metadata"]["namespace"]
        self.dir = fake.workdir / self.namespace / self.name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.container = obj["spec"]["containers"][0]
        self.ports = {p["containerPort"]: _free_port() for p in self.container.get("ports", [])}
        self.process: subprocess.Popen | None = None
        self.env: dict[str, str] = {}
        self.log = self.dir / "log.txt"
        self.next_probe = 0.0

    # -- starting
    def start(self) -> None:
        try:
            self.mounts = self._mounts()
            self.env = self._env()
        except LookupError as e:  # a Secret or ConfigMap that is not there: the kubelet waits for it
            self._set_state({"waiting": {"reason": "CreateContainerConfigError", "message": str(e)}})
            return
        python = self.fake.images.get(self.container.get("image", ""))
        if python is None:
            self._set_state({"waiting": {"reason": "ErrImagePull", "message": f"pull access denied for "
                                         f"{self.container.get('image')!r}: repository does not exist"}})
            return
        argv = [self._localize(self._expand(a)) for a in self.container.get("command", []) +
                self.container.get("args", [])]
        if argv and argv[0] == "python":
            argv[0:1] = python
        host_env = {k: v for k, v in os.environ.items() if not k.startswith("MARS_")}
        with open(self.log, "w") as out:
            self.process = subprocess.Popen(argv, env={**host_env, **self.env}, stdout=out,
                                            stderr=subprocess.STDOUT, cwd=self.dir, start_new_session=True)
        self._set_state({"running": {"startedAt": _now()}})

    def _mounts(self) -> dict[str, str]:
        volumes = {v["name"]: v for v in self.obj["spec"].get("volumes", [])}
        mounts = {}
        for mount in self.container.get("volumeMounts", []):
            local = self.dir / "volumes" / mount["name"]
            local.mkdir(parents=True, exist_ok=True)
            source = volumes[mount["name"]]
            if "configMap" in source:
                data = self.fake.get("configmaps", self.namespace, source["configMap"]["name"])
                for key, text in data.get("data", {}).items():
                    (local / key).write_text(text)
            mounts[mount["mountPath"]] = str(local)
        return mounts

    def _env(self) -> dict[str, str]:
        env: dict[str, str] = {}
        for var in self.container.get("env", []):
            if "value" in var:
                value = self._expand(var["value"], env)
            else:
                value = self._value_from(var["valueFrom"])
            env[var["name"]] = self._localize(self._remap_port(value))
        return env

    def _value_from(self, source: dict[str, Any]) -> str:
        if "fieldRef" in source:
            path = source["fieldRef"]["fieldPath"]
            return {"metadata.name": self.name, "metadata.namespace": self.namespace,
                    "status.podIP": "127.0.0.1"}[path]
        if "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            secret = self.fake.get("secrets", self.namespace, ref["name"])
            if ref["key"] in secret.get("stringData", {}):
                return secret["stringData"][ref["key"]]
            return base64.b64decode(secret["data"][ref["key"]]).decode()
        ref = source["resourceFieldRef"]
        kind, _, resource = ref["resource"].partition(".")
        amount = parse_quantity(self.container["resources"][kind][resource])
        return str(math.ceil(amount))  # the divisor 1 rounds up, as the kubelet does

    def _expand(self, text: str, env: dict[str, str] | None = None) -> str:
        env = self.env if env is None else env
        return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), text)

    def _remap_port(self, value: str) -> str:
        return str(self.ports[int(value)]) if value.isdigit() and int(value) in self.ports else value

    def _localize(self, text: str) -> str:
        text = self.fake.resolve_names(text)
        for path in sorted(getattr(self, "mounts", {}), key=len, reverse=True):
            local = self.mounts[path]
            text = re.sub(rf"(^|[,:=]){re.escape(path)}(?=$|[/,:])", lambda m, local=local: m.group(1) + local, text)
        return text

    # -- status
    def _set_state(self, state: dict[str, Any], ready: bool = False) -> None:
        self.obj["status"]["containerStatuses"] = [{
            "name": self.container["name"], "image": self.container.get("image", ""), "imageID": "",
            "ready": ready, "started": "running" in state, "restartCount": 0, "state": state}]
        self.obj["status"]["conditions"] = [{"type": "Ready", "status": str(ready), "lastTransitionTime": _now()}]

    @property
    def ready(self) -> bool:
        return self.obj["status"]["containerStatuses"][0]["ready"]

    def probe(self) -> None:
        """Notice an exit; run the readiness probe when it is due."""
        process = self.process
        if process is None or time.monotonic() < self.next_probe:
            return
        code = process.poll()
        if code is not None:
            with self.fake.lock:
                self._set_state({"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}})
                self.process = None
            return
        probe = self.container.get("readinessProbe")
        ok = True if probe is None else self._run_probe(probe)
        # a pod not ready yet is probed often (the tests wait on it); a ready one at the probe's period
        self.next_probe = time.monotonic() + (float(probe.get("periodSeconds", 10)) if ok and probe else 0.5)
        with self.fake.lock:
            if self.process is not None:
                self._set_state({"running": {"startedAt": _now()}}, ready=ok)

    def _run_probe(self, probe: dict[str, Any]) -> bool:
        timeout = float(probe.get("timeoutSeconds", 1))
        if "exec" in probe:
            argv = list(probe["exec"]["command"])
            if argv[0] == "python":
                argv[0:1] = self.fake.images[self.container["image"]]
            host_env = {k: v for k, v in os.environ.items() if not k.startswith("MARS_")}
            try:
                return subprocess.run(argv, env={**host_env, **self.env}, capture_output=True, timeout=timeout,
                                      check=False).returncode == 0
            except subprocess.TimeoutExpired:
                return False
        check = probe.get("httpGet") or probe["tcpSocket"]
        port = self.ports.get(check["port"], check["port"])
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
                if "httpGet" not in probe:
                    return True
                conn.sendall(f"GET {check['path']} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
                return conn.recv(64).split(b" ")[1:2] in ([b"200"], [b"204"])
        except OSError:
            return False

    def kill(self, grace: float) -> None:
        """SIGTERM to the container's first process; after ``grace`` s, SIGKILL to all it started."""
        process, self.process = self.process, None  # the prober no longer looks at it
        if process is None:
            return
        try:
            tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            tree = []
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            pass
        for proc in tree:
            try:
                proc.kill()
            except psutil.Error:
                pass
        process.wait(10)
        psutil.wait_procs(tree, timeout=10)


class FakeKubernetes:
    """The API server on a thread of its own; ``url`` is its address, ``configuration()`` a client's config for it.

    Use as a context manager: leaving it kills every pod left and stops the server.
    """

    def __init__(self, workdir: str | os.PathLike, images: dict[str, list[str]] | None = None):
        self.workdir = pathlib.Path(workdir)
        #: the images the "nodes" have, as the ``python`` each runs; pulling any other one fails
        self.images = images if images is not None else dict(IMAGES)
        self.lock = threading.RLock()
        self.store: dict[str, dict[tuple[str, str], dict[str, Any]]] = {p: {} for p in [*CORE, *APPS]}
        self.pods: dict[tuple[str, str], Pod] = {}
        self.proxies: dict[tuple[str, str], asyncio.AbstractServer] = {}
        self.requests: list[tuple[str, str]] = []  # (method, path) of every call, for the tests
        self._loop = asyncio.new_event_loop()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="fake-kubernetes")
        self._thread.start()
        self._runner = asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(10)
        self._prober = threading.Thread(target=self._probe_loop, daemon=True, name="fake-kubelet")
        self._prober.start()

    async def _serve(self) -> web.AppRunner:
        app = web.Application(middlewares=[self._record])
        core, apps = "/api/v1/namespaces", "/apis/apps/v1/namespaces"
        app.router.add_get("/api/v1/nodes", self._nodes)
        app.router.add_post(core, self._create)
        app.router.add_get(core, self._list)
        for base in (core, apps):
            app.router.add_post(base + "/{ns}/{plural}", self._create)
            app.router.add_get(base + "/{ns}/{plural}", self._list)
            for method in ("GET", "DELETE", "PATCH"):
                app.router.add_route(method, base + "/{ns}/{plural}/{name}", self._one)
        app.router.add_route("*", core + "/{name}", self._one)
        app.router.add_get(core + "/{ns}/pods/{name}/log", self._log)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
        return runner

    def configuration(self) -> Any:
        from kubernetes import client

        config = client.Configuration()
        config.host = self.url
        return config

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests.append((request.method, request.path))
        with self.lock:
            return await handler(request)

    # ---------------------------------------------------------------- REST
    def _key(self, request: web.Request) -> tuple[str, str, str]:
        info = request.match_info
        if "plural" not in info:
            return "namespaces", "", info.get("name", "")
        return info["plural"], info["ns"], info.get("name", "")

    def get(self, plural: str, namespace: str, name: str) -> dict[str, Any]:
        try:
            return self.store[plural][(namespace, name)]
        except KeyError:
            raise LookupError(f'{plural} "{name}" not found') from None

    async def _nodes(self, request: web.Request) -> web.Response:
        node = {"metadata": {"name": "fake-node", "uid": "node-1", "creationTimestamp": _now()},
                "status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                           "conditions": [{"type": "Ready", "status": "True"}]}}
        return web.json_response({"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": [node]})

    async def _create(self, request: web.Request) -> web.Response:
        plural, ns, _ = self._key(request)
        if plural not in self.store:
            return _status(404, "NotFound", f"the server could not find the requested resource ({plural})")
        if ns and ("", ns) not in self.store["namespaces"]:
            return _status(404, "NotFound", f'namespaces "{ns}" not found')
        body = await request.json()
        name = body["metadata"]["name"]
        if (ns, name) in self.store[plural]:
            return _status(409, "AlreadyExists", f'{plural} "{name}" already exists')
        obj = self._admit(plural, ns, body)
        self.store[plural][(ns, name)] = obj
        if plural in APPS:
            self._reconcile(plural, obj)
        if plural == "services" and obj["spec"].get("type") in ("NodePort", "LoadBalancer"):
            await self._open_proxy(obj)
        return web.json_response(obj, status=201)

    def _admit(self, plural: str, ns: str, body: dict[str, Any]) -> dict[str, Any]:
        obj = copy.deepcopy(body)
        kind = {**CORE, **APPS}[plural]
        obj.update(kind=kind, apiVersion="apps/v1" if plural in APPS else "v1")
        meta = obj["metadata"]
        meta.update(uid=f"uid-{next(_ids)}", creationTimestamp=_now(), resourceVersion=str(next(_ids)))
        if ns:
            meta["namespace"] = ns
        if plural == "namespaces":
            obj["status"] = {"phase": "Active"}
        if plural == "secrets":  # the API keeps data only: stringData is for writing
            data = obj.setdefault("data", {})
            data.update({k: base64.b64encode(v.encode()).decode() for k, v in obj.pop("stringData", {}).items()})
        if plural == "services":
            spec = obj["spec"]
            spec.setdefault("type", "ClusterIP")
            if spec.get("clusterIP") != "None":
                spec["clusterIP"] = f"10.96.0.{next(_ids) % 250 + 1}"
            for port in spec["ports"]:
                if spec["type"] in ("NodePort", "LoadBalancer"):
                    port["nodePort"] = _free_port()
            obj["status"] = {"loadBalancer": {}}
        if plural in APPS:
            obj["status"] = {"replicas": 0}
        return obj

    async def _list(self, request: web.Request) -> web.Response:
        plural, ns, _ = self._key(request)
        if plural not in self.store:
            return _status(404, "NotFound", f"the server could not find the requested resource ({plural})")
        selector = request.query.get("labelSelector")
        items = [o for (o_ns, _), o in self.store[plural].items()
                 if (not ns or o_ns == ns) and _matches(o["metadata"].get("labels", {}), selector)]
        kind = {**CORE, **APPS}[plural] + "List"
        return web.json_response({"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                                  "items": items})

    async def _one(self, request: web.Request) -> web.Response:
        plural, ns, name = self._key(request)
        if plural not in self.store:
            return _status(404, "NotFound", f"the server could not find the requested resource ({plural})")
        obj = self.store[plural].get((ns, name))
        if obj is None:
            return _status(404, "NotFound", f'{plural} "{name}" not found')
        if request.method == "PATCH":
            _merge(obj, await request.json())
            obj["metadata"]["resourceVersion"] = str(next(_ids))
            if plural in APPS:
                self._reconcile(plural, obj)
        elif request.method == "DELETE":
            self._delete(plural, ns, name)
            if plural in ("namespaces", "services", "pods"):  # as the real API: these answer with the object
                if plural == "namespaces":
                    obj["status"] = {"phase": "Terminating"}
                return web.json_response(obj)
            return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                      "details": {"name": name, "kind": plural}})
        return web.json_response(obj)

    async def _log(self, request: web.Request) -> web.Response:
        pod = self.pods.get((request.match_info["ns"], request.match_info["name"]))
        if pod is None:
            return _status(404, "NotFound", f'pods "{request.match_info["name"]}" not found')
        lines = pod.log.read_text().splitlines(keepends=True) if pod.log.exists() else []
        tail = int(request.query.get("tailLines", len(lines) or 1))
        return web.Response(text="".join(lines[-tail:]))

    # ---------------------------------------------------------------- controllers
    def _owned(self, owner: dict[str, Any]) -> list[dict[str, Any]]:
        uid = owner["metadata"]["uid"]
        return [p for p in self.store["pods"].values()
                if any(r["uid"] == uid for r in p["metadata"].get("ownerReferences", []))
                and "deletionTimestamp" not in p["metadata"]]

    def _reconcile(self, plural: str, obj: dict[str, Any]) -> None:
        """Pods up or down to the workload's replicas (a StatefulSet's by ordinal, a Deployment's newest last)."""
        pods = sorted(self._owned(obj), key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["uid"]))
        want = int(obj["spec"].get("replicas", 1))
        name, ns = obj["metadata"]["name"], obj["metadata"]["namespace"]
        if plural == "statefulsets":
            have = {p["metadata"]["name"] for p in pods}
            for i in range(want):
                if f"{name}-{i}" not in have:
                    self._new_pod(obj, f"{name}-{i}", hostname=f"{name}-{i}", subdomain=obj["spec"]["serviceName"])
            extra = [p for p in pods if int(p["metadata"]["name"].rsplit("-", 1)[1]) >= want]
        else:
            for _ in range(want - len(pods)):
                self._new_pod(obj, f"{name}-{secrets.token_hex(5)}-{secrets.token_hex(3)[:5]}")
            extra = pods[want:] if len(pods) > want else []
        for pod in extra:
            self._delete("pods", ns, pod["metadata"]["name"])
        obj["status"] = {"replicas": want, "observedGeneration": 1}

    def _new_pod(self, owner: dict[str, Any], name: str, **placement: str) -> None:
        template = owner["spec"]["template"]
        ns = owner["metadata"]["namespace"]
        meta = {"name": name, "namespace": ns, "labels": dict(template["metadata"].get("labels", {})),
                "uid": f"uid-{next(_ids)}", "creationTimestamp": _now(), "resourceVersion": str(next(_ids)),
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner["kind"], "name": owner["metadata"]["name"],
                                     "uid": owner["metadata"]["uid"], "controller": True}]}
        spec = {**copy.deepcopy(template["spec"]), **placement}
        obj = {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec,
               "status": {"phase": "Running", "podIP": "127.0.0.1", "hostIP": "127.0.0.1", "startTime": _now()}}
        self.store["pods"][(ns, name)] = obj
        pod = self.pods[(ns, name)] = Pod(self, obj)
        pod._set_state({"waiting": {"reason": "ContainerCreating"}})
        pod.start()

    def _delete(self, plural: str, ns: str, name: str) -> None:
        obj = self.store[plural].get((ns, name))
        if obj is None:
            return
        if plural == "namespaces":
            for kind in ("deployments", "statefulsets", "services", "configmaps", "secrets", "pods"):
                for o_ns, o_name in list(self.store[kind]):
                    if o_ns == name:
                        self._delete(kind, o_ns, o_name)
        elif plural in APPS:
            for pod in self._owned(obj):
                self._delete("pods", ns, pod["metadata"]["name"])
        elif plural == "services" and (ns, name) in self.proxies:
            self.proxies.pop((ns, name)).close()
        if plural == "pods":  # gone once its process is: the kill runs beside the server
            if "deletionTimestamp" in obj["metadata"]:
                return  # being deleted already
            obj["metadata"]["deletionTimestamp"] = _now()
            grace = float(obj["spec"].get("terminationGracePeriodSeconds", 30))
            self._loop.create_task(self._kill(ns, name, min(grace, 15.0)))
            return
        del self.store[plural][(ns, name)]

    async def _kill(self, ns: str, name: str, grace: float) -> None:
        pod = self.pods.get((ns, name))
        if pod is not None:
            await asyncio.to_thread(pod.kill, grace)
        with self.lock:
            self.store["pods"].pop((ns, name), None)
            self.pods.pop((ns, name), None)

    # ---------------------------------------------------------------- the pod network
    def resolve_names(self, text: str) -> str:
        """Pods' DNS names in ``text`` as 127.0.0.1, and with a port, the port the pod really listens on."""
        for pod in list(self.pods.values()):
            spec = pod.obj["spec"]
            if not spec.get("hostname") or not spec.get("subdomain"):
                continue
            base = f"{spec['hostname']}.{spec['subdomain']}.{pod.namespace}"

            def local(m: re.Match, ports: dict[int, int] = pod.ports) -> str:
                return "127.0.0.1" + (f":{ports.get(int(m.group(1)), m.group(1))}" if m.group(1) else "")

            for name in (f"{base}.svc.cluster.local", f"{base}.svc", base):
                text = re.sub(rf"(?<![\w.-]){re.escape(name)}(?::(\d+))?(?![\w.-])", local, text)
        return text

    async def _open_proxy(self, svc: dict[str, Any]) -> None:
        ns, selector = svc["metadata"]["namespace"], svc["spec"].get("selector", {})
        port = svc["spec"]["ports"][0]
        target = int(port.get("targetPort", port["port"]))

        async def forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with self.lock:
                ready = [p for p in self.pods.values() if p.namespace == ns and p.process is not None and p.ready
                         and all(p.obj["metadata"]["labels"].get(k) == v for k, v in selector.items())]
            if not ready:
                writer.close()
                return
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", ready[0].ports[target])
            except OSError:
                writer.close()
                return
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

        server = await asyncio.start_server(forward, "127.0.0.1", port["nodePort"])
        self.proxies[(ns, svc["metadata"]["name"])] = server

    # ---------------------------------------------------------------- the kubelet's probes
    def _probe_loop(self) -> None:
        while not self._stopping.wait(0.2):
            with self.lock:
                pods = [p for p in self.pods.values() if "deletionTimestamp" not in p.obj["metadata"]]
            for pod in pods:
                pod.probe()

    def processes(self) -> list[psutil.Process]:
        """Every process the pods started that is still running."""
        found = []
        for pod in list(self.pods.values()):
            if pod.process is not None:
                try:
                    top = psutil.Process(pod.process.pid)
                    found += [top, *top.children(recursive=True)]
                except psutil.NoSuchProcess:
                    pass
        return found

    def objects(self) -> list[tuple[str, str, str]]:
        """(plural, namespace, name) of everything stored."""
        with self.lock:
            return [(plural, ns, name) for plural, objs in self.store.items() for ns, name in objs]

    def close(self) -> None:
        self._stopping.set()
        self._prober.join(30)
        with self.lock:
            pods = list(self.pods.values())
        for pod in pods:
            pod.kill(5.0)

        async def stop() -> None:
            for server in self.proxies.values():
                server.close()
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> FakeKubernetes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()
