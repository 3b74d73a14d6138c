"""``new_cluster`` on Kubernetes: the objects of :mod:`.objects`, created through the official client.

The ``kubernetes`` package is the ``[kubernetes]`` extra, imported only when a
cluster is made. ``new_cluster`` creates the objects, waits until the web
service lists the workers (failing early, with the pod's last log lines, when
a pod cannot start), and returns a :class:`KubernetesCluster` whose session is
the default one.
"""

from __future__ import annotations

import atexit
import json
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from .objects import (
    DEFAULT_WEB_PORT,
    LABEL_PART,
    WEB_SERVICE,
    WORKER,
    ClusterSpec,
    cluster_objects,
)

#: the waiting reasons of a container that will not start by waiting longer
_STUCK = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CrashLoopBackOff",
                    "CreateContainerConfigError", "CreateContainerError", "RunContainerError"})
#: the client's create and delete methods by kind: (API class, create, delete, namespaced)
_METHODS = {
    "Namespace": ("CoreV1Api", "create_namespace", "delete_namespace", False),
    "Secret": ("CoreV1Api", "create_namespaced_secret", "delete_namespaced_secret", True),
    "ConfigMap": ("CoreV1Api", "create_namespaced_config_map", "delete_namespaced_config_map", True),
    "Service": ("CoreV1Api", "create_namespaced_service", "delete_namespaced_service", True),
    "StatefulSet": ("AppsV1Api", "create_namespaced_stateful_set", "delete_namespaced_stateful_set", True),
    "Deployment": ("AppsV1Api", "create_namespaced_deployment", "delete_namespaced_deployment", True),
}
_POLL = 0.5


def _kubernetes() -> Any:
    try:
        import kubernetes
    except ImportError as e:
        raise ImportError("mars.deploy.kubernetes.new_cluster needs the kubernetes client: "
                          "pip install 'pymars[kubernetes]'") from e
    return kubernetes


def _api_client(kube_api: Any) -> tuple[Any, bool]:
    """(an ApiClient, whether it is ours to close): ``kube_api`` itself, or one from in-cluster config or kubeconfig."""
    k8s = _kubernetes()
    if isinstance(kube_api, k8s.client.ApiClient):
        return kube_api, False
    if isinstance(kube_api, k8s.client.Configuration):
        return k8s.client.ApiClient(kube_api), True
    if kube_api is not None:
        raise TypeError(f"kube_api must be a kubernetes ApiClient, a Configuration or None, got {type(kube_api).__name__}")
    try:
        k8s.config.load_incluster_config()
    except k8s.config.ConfigException:
        k8s.config.load_kube_config()
    return k8s.client.ApiClient(), True


class KubernetesCluster:
    """A Mars cluster in one namespace of a Kubernetes cluster; see :func:`new_cluster`."""

    def __init__(self, spec: ClusterSpec, kube_api: Any = None, create_namespace: bool | None = None,
                 timeout: float = 300.0, endpoint: str | None = None):
        self.spec = spec
        self.timeout = timeout
        self._api, self._own_api = _api_client(kube_api)
        k8s = _kubernetes()
        self._apis = {"CoreV1Api": k8s.client.CoreV1Api(self._api), "AppsV1Api": k8s.client.AppsV1Api(self._api)}
        self._create_namespace = create_namespace
        self._given_endpoint = endpoint.rstrip("/") if endpoint else None
        self._created: list[dict[str, Any]] = []
        self.endpoint: str | None = None
        self.session: Any = None

    @property
    def namespace(self) -> str:
        return self.spec.namespace

    @property
    def token(self) -> str:
        return self.spec.token

    @property
    def _core(self) -> Any:
        return self._apis["CoreV1Api"]

    def start(self) -> KubernetesCluster:
        """Create the objects, wait for ``worker_num`` workers, and open the default session."""
        from ...remote import ClusterSession

        try:
            if self._create_namespace is None:  # a namespace given: made (and deleted at the end) only if missing
                self._create_namespace = not self._namespace_exists()
            for obj in cluster_objects(self.spec, with_namespace=self._create_namespace):
                self._create(obj)
            self._wait_workers(self.spec.worker_num, time.monotonic() + self.timeout)
            self.session = ClusterSession(self.endpoint, token=self.token)
            self.session.as_default()
        except BaseException:
            self.stop()
            raise
        atexit.register(self.stop)
        return self

    def _namespace_exists(self) -> bool:
        try:
            self._core.read_namespace(self.namespace)
        except _kubernetes().client.ApiException as e:
            if e.status == 404:
                return False
            raise
        return True

    def _create(self, obj: dict[str, Any]) -> None:
        api, create, _, namespaced = _METHODS[obj["kind"]]
        method = getattr(self._apis[api], create)
        try:
            method(self.namespace, obj) if namespaced else method(obj)
        except _kubernetes().client.ApiException as e:
            what = f"{obj['kind']} {obj['metadata']['name']}"
            if e.status == 409:
                raise RuntimeError(f"namespace {self.namespace!r} already has a {what}: stop the Mars cluster "
                                   "there or give another namespace") from None
            raise RuntimeError(f"creating {what} in namespace {self.namespace!r} failed: {e.status} "
                               f"{e.reason}: {_message(e)}") from None
        self._created.append(obj)

    # ---------------------------------------------------------------- waiting
    def _wait_workers(self, n: int, deadline: float) -> None:
        """Until the web service lists exactly ``n`` alive workers; a pod that cannot start fails it at once."""
        seen: str = "the web service did not answer"
        while True:
            self._check_pods()
            if self.endpoint is None:
                self.endpoint = self._web_endpoint()
            if self.endpoint is not None:
                alive, seen = self._alive_workers()
                if alive == n:
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the Mars cluster in namespace {self.namespace!r} did not have {n} workers "
                                   f"within {self.timeout:g} s ({seen}); pods: {self._pod_summary()}")
            time.sleep(_POLL)

    def _pods(self) -> list[Any]:
        return self._core.list_namespaced_pod(self.namespace, label_selector=f"{LABEL_PART}=pymars").items

    def _check_pods(self) -> None:
        for pod in self._pods():
            for status in pod.status.container_statuses or []:
                waiting, ended = status.state.waiting, status.state.terminated
                if waiting is not None and waiting.reason in _STUCK:
                    why = f"{waiting.reason}: {waiting.message or ''}".rstrip(": ")
                elif ended is not None:
                    why = f"its container exited with code {ended.exit_code} ({ended.reason})"
                else:
                    continue
                raise RuntimeError(f"pod {pod.metadata.name} of the Mars cluster cannot start: {why}"
                                   f"{self._log_tail(pod.metadata.name)}")

    def _log_tail(self, pod: str) -> str:
        try:
            log = self._core.read_namespaced_pod_log(pod, self.namespace, tail_lines=20)
        except Exception:  # noqa: BLE001 - the log is a courtesy
            return ""
        return f"; its last lines:\n{log}" if log else ""

    def _pod_summary(self) -> str:
        pods = self._pods()
        return ", ".join(f"{p.metadata.name} {p.status.phase}{' ready' if _ready(p) else ''}" for p in pods) or "none"

    def _web_endpoint(self) -> str | None:
        """The web service's URL as this process reaches it, or None while a load balancer has no address yet."""
        if self._given_endpoint:
            return self._given_endpoint
        svc = self._core.read_namespaced_service(WEB_SERVICE, self.namespace)
        port = svc.spec.ports[0]
        if svc.spec.type == "LoadBalancer":
            ingress = (svc.status.load_balancer.ingress or []) if svc.status.load_balancer else []
            host = (ingress[0].ip or ingress[0].hostname) if ingress else None
            return f"http://{_url_host(host)}:{port.port}" if host else None
        if svc.spec.type == "NodePort":
            return f"http://{_url_host(self._node_address())}:{port.node_port}"
        return f"http://{_url_host(svc.spec.cluster_ip)}:{port.port}"

    def _node_address(self) -> str:
        try:
            nodes = self._core.list_node().items
        except _kubernetes().client.ApiException as e:
            raise RuntimeError(f"cannot list the nodes to reach the NodePort web service ({e.status} {e.reason}): "
                               "pass endpoint=, or web_service_type='LoadBalancer'") from None
        for kind in ("ExternalIP", "InternalIP"):
            for node in sorted(nodes, key=lambda n: not _ready(n)):
                for address in node.status.addresses or []:
                    if address.type == kind:
                        return address.address
        raise RuntimeError("no node has an address to reach the NodePort web service: pass endpoint=")

    def _alive_workers(self) -> tuple[int, str]:
        """(alive workers the web service lists, what it said); (-1, why) when it does not answer yet."""
        request = urllib.request.Request(f"{self.endpoint}/api/cluster/workers",
                                         headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as resp:
                workers = json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return -1, f"the web service at {self.endpoint} answered {e.code}"
        except (OSError, ValueError) as e:
            return -1, f"the web service at {self.endpoint} did not answer: {e}"
        alive = sum(w.get("state") == "alive" for w in workers)
        return alive, f"{alive} workers alive"

    # ---------------------------------------------------------------- changing
    def scale(self, worker_num: int, timeout: float | None = None) -> None:
        """Set the worker Deployment's replicas and wait until the web service lists that many workers alive.

        Workers taken away stop with the chunks they held: results still needed are recomputed.
        """
        if isinstance(worker_num, bool) or not isinstance(worker_num, int) or worker_num < 0:
            raise ValueError(f"worker_num must be an int >= 0, got {worker_num!r}")
        self._apis["AppsV1Api"].patch_namespaced_deployment(WORKER, self.namespace,
                                                           {"spec": {"replicas": worker_num}})
        self.spec.worker_num = worker_num
        self._wait_workers(worker_num, time.monotonic() + (self.timeout if timeout is None else timeout))

    def stop(self, wait: float = 60.0) -> None:
        """Close the session and delete what :meth:`start` made (the namespace too, if it made it); safe to repeat.

        Waits up to ``wait`` seconds for the pods to be gone.
        """
        atexit.unregister(self.stop)
        if self.session is not None:
            self.session.close()
            self.session = None
        for obj in reversed(self._created):
            self._delete(obj)
        made = bool(self._created)
        self._created = []
        deadline = time.monotonic() + wait
        while made and time.monotonic() < deadline and self._pods_left():
            time.sleep(_POLL)
        if self._own_api and self._api is not None:
            self._api.close()
        self._api = None

    def _delete(self, obj: dict[str, Any]) -> None:
        api, _, delete, namespaced = _METHODS[obj["kind"]]
        method = getattr(self._apis[api], delete)
        name = obj["metadata"]["name"]
        try:
            if namespaced:
                method(name, self.namespace, propagation_policy="Background")
            else:
                method(name, propagation_policy="Background")
        except _kubernetes().client.ApiException as e:
            if e.status != 404:  # gone already: with its namespace, or by hand
                raise

    def _pods_left(self) -> bool:
        try:
            return bool(self._pods())
        except _kubernetes().client.ApiException as e:
            return e.status != 404

    def __enter__(self) -> KubernetesCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return (f"<KubernetesCluster namespace {self.namespace}, {self.spec.supervisor_num} supervisors, "
                f"{self.spec.worker_num} workers, web {self.endpoint}>")


def _ready(obj: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in (obj.status.conditions or []))


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _message(e: Any) -> str:
    try:
        return json.loads(e.body).get("message", "")
    except (TypeError, ValueError, AttributeError):
        return str(e.body or "")


def new_cluster(kube_api: Any = None, image: str | None = None, namespace: str | None = None,
                supervisor_num: int = 1, worker_num: int = 2, worker_cpu: float | str = 2,
                worker_mem: str = "4Gi", worker_cache_mem: int | str | None = None,
                worker_spill_paths: Sequence[str] | None = None, web_port: int = DEFAULT_WEB_PORT,
                timeout: float = 300.0, *, endpoint: str | None = None, **options: Any) -> KubernetesCluster:
    """Start a Mars cluster on Kubernetes; its session becomes the default.

    Parameters
    ----------
    kube_api
        A ``kubernetes.client.ApiClient`` (or ``Configuration``); None: the in-cluster config, else kubeconfig.
    image
        The image of every pod (default ``pymars:<version>``, the repository's Dockerfile).
    namespace
        Where the cluster goes; None makes a new one, ``mars-<random>``, deleted by :meth:`~KubernetesCluster.stop`.
        A given namespace is used as it is (and created, then deleted at the end, when missing).
    worker_cpu, worker_mem
        Each worker's requests and limits (a Kubernetes quantity: ``2``, ``500m``, ``4Gi``); the worker runs
        that many slots (rounded up) and keeps within that memory.
    worker_cache_mem
        Memory for stored chunks: bytes, a quantity (``1Gi``) or a share (``"50%"``); default 40%.
    worker_spill_paths
        Directories in the worker containers (each an emptyDir) where chunks spill beyond the cache.
    web_port
        The supervisors' web port, and the port of the ``mars-web`` Service.
    endpoint
        The web service's URL as this process reaches it (a port-forward, an ingress); by default it is
        found from the Service: a node's address and its NodePort, the load balancer's, or the cluster IP.
    options
        ``supervisor_cpu``, ``supervisor_mem``, ``web_service_type`` (``NodePort`` by default,
        ``ClusterIP`` or ``LoadBalancer``), ``web_allow_hosts``, ``image_pull_policy``.

    Examples
    --------
    >>> import mars.tensor as mt                                                  # doctest: +SKIP
    >>> with new_cluster(worker_num=2, worker_cpu=1, worker_mem="2Gi") as cluster:  # doctest: +SKIP
    ...     print((mt.ones((10, 10), chunk_size=5) + 1).sum().execute().fetch())
    200.0
    """
    spec = ClusterSpec(namespace=namespace or f"mars-{secrets.token_hex(4)}", supervisor_num=supervisor_num,
                       worker_num=worker_num, worker_cpu=worker_cpu, worker_mem=worker_mem,
                       worker_cache_mem=worker_cache_mem, worker_spill_paths=worker_spill_paths, web_port=web_port,
                       **({"image": image} if image else {}), **options)
    cluster = KubernetesCluster(spec, kube_api, timeout=timeout, endpoint=endpoint,
                                create_namespace=True if namespace is None else None)
    return cluster.start()
