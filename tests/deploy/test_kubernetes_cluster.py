"""``mars.deploy.kubernetes.new_cluster`` against a fake API server whose pods are local processes.

The client is the official ``kubernetes`` package pointed at the fake
(tests/deploy/kubernetes_fake.py): the objects it creates are stored there,
their pods run the manifests' commands with the environment the kubelet would
give them, and the job reaches them through the NodePort Service.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.request

import pytest

pytest.importorskip("kubernetes")

import mars.tensor as mt
from mars.deploy.kubernetes import new_cluster
from mars.deploy.kubernetes.objects import LABEL_COMPONENT

from .kubernetes_fake import FakeKubernetes


@pytest.fixture
def fake(tmp_path):
    with FakeKubernetes(tmp_path) as fake:
        yield fake


def _api(fake: FakeKubernetes):
    from kubernetes import client

    return client.ApiClient(fake.configuration())


def _workers(cluster) -> list[dict]:
    request = urllib.request.Request(cluster.endpoint + "/api/cluster/workers",
                                     headers={"Authorization": f"Bearer {cluster.token}"})
    with urllib.request.urlopen(request, timeout=10) as resp:
        return [w for w in json.loads(resp.read()) if w["state"] == "alive"]


def _wait_until(condition, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not {what} within {timeout} s"
        time.sleep(0.1)


@pytest.mark.timeout(180)
def test_a_cluster_runs_a_job_scales_and_leaves_nothing_behind(fake, tmp_path):
    api = _api(fake)
    try:
        with new_cluster(api, worker_num=2, worker_cpu=1, worker_mem="1Gi", worker_cache_mem="128Mi",
                         worker_spill_paths=["/mnt/spill"], timeout=120) as cluster:
            assert cluster.namespace.startswith("mars-")
            # the token reached the pods from the Secret, not from a literal in the pod spec
            secret = fake.get("secrets", cluster.namespace, "mars-token")
            assert base64.b64decode(secret["data"]["token"]).decode() == cluster.token
            for pod in fake.pods.values():
                assert pod.env["MARS_TOKEN"] == cluster.token
                spec_env = {e["name"]: e for e in pod.container["env"]}
                assert "value" not in spec_env["MARS_TOKEN"]

            result = (mt.ones((10, 10), chunk_size=5) + 1).sum().execute(session=cluster.session)
            assert result.fetch() == 200.0

            workers = _workers(cluster)
            assert len(workers) == 2
            assert {(w["n_cpu"], w["memory_limit"]) for w in workers} == {(1, 1 << 30)}
            # readiness: the supervisor by /api/health, the workers by the probe command once registered
            _wait_until(lambda: all(p.ready for p in fake.pods.values()), "every pod ready")
            worker_pods = [p for p in fake.pods.values() if p.obj["metadata"]["labels"][LABEL_COMPONENT] == "worker"]
            assert all(str(tmp_path) in p.env["MARS_SPILL_DIRS"] for p in worker_pods)

            cluster.scale(3)
            assert len(_workers(cluster)) == 3
            assert fake.get("deployments", cluster.namespace, "mars-worker")["spec"]["replicas"] == 3
            assert (mt.arange(12, chunk_size=4) * 2).sum().execute(session=cluster.session).fetch() == 132
            processes = fake.processes()
            assert processes
        assert cluster.session is None
        assert fake.objects() == []
        assert not [p for p in processes if p.is_running() and p.status() != "zombie"]
        assert ("DELETE", f"/api/v1/namespaces/{cluster.namespace}") in fake.requests
    finally:
        api.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("image, why", [
    ("python:3.12-slim", r"its container exited with code 1 \(Error\); its last lines:\n.*No module named 'mars'"),
    ("registry.invalid/pymars:0", r"ErrImagePull: pull access denied for 'registry.invalid/pymars:0'"),
], ids=["an image without pymars", "no such image"])
def test_a_pod_that_cannot_start_fails_the_cluster_at_once_and_its_objects_go(fake, image, why):
    api = _api(fake)
    try:
        with pytest.raises(RuntimeError, match=r"pod mars-\S+ of the Mars cluster cannot start: " + why):
            new_cluster(api, image=image, namespace="given", worker_num=1, worker_cpu=1, worker_mem="1Gi",
                        timeout=30)
        # "given" did not exist: new_cluster made it, and deleted it with the rest
        assert fake.objects() == []
        assert ("POST", "/api/v1/namespaces") in fake.requests
    finally:
        api.close()


def test_a_namespace_that_already_holds_a_cluster_is_refused(fake):
    api = _api(fake)
    try:
        from kubernetes import client

        core = client.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": "taken"}})
        core.create_namespaced_secret("taken", {"metadata": {"name": "mars-token"}, "stringData": {"token": "x"}})
        with pytest.raises(RuntimeError, match="namespace 'taken' already has a Secret mars-token"):
            new_cluster(api, namespace="taken", timeout=5)
        # the namespace was the user's: it stays, with what was in it
        assert fake.objects() == [("namespaces", "", "taken"), ("secrets", "taken", "mars-token")]
    finally:
        api.close()


@pytest.mark.parametrize("kwargs, message", [
    ({"worker_num": -1}, "worker_num must be an int >= 0, got -1"),
    ({"supervisor_num": 0}, "supervisor_num must be an int >= 1, got 0"),
    ({"worker_mem": "4gb"}, "worker_mem must be a Kubernetes quantity like 4Gi, 512Mi or 2, got '4gb'"),
    ({"worker_cpu": 0}, "worker_cpu must be positive, got 0"),
    ({"namespace": "Bad_Name"}, "namespace must be a DNS label"),
    ({"web_port": 7001}, "web_port must differ from the actor ports 7001 and 7003, got 7001"),
    ({"worker_cache_mem": "150%"}, r"worker_cache_mem must be a share between 0% and 100%, got '150%'"),
    ({"worker_spill_paths": ["spill"]}, "worker_spill_paths must be absolute paths in the container"),
    ({"web_service_type": "Ingress"}, "web_service_type must be one of ClusterIP, NodePort, LoadBalancer"),
], ids=lambda v: next(iter(v)) if isinstance(v, dict) else None)
def test_bad_arguments_are_refused_before_anything_is_created(fake, kwargs, message):
    api = _api(fake)
    try:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            new_cluster(api, **kwargs)
        assert fake.requests == []
    finally:
        api.close()
