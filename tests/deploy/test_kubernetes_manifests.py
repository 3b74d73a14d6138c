"""``mars.deploy.kubernetes.manifests``: every object is one the API accepts.

Each object is read into the ``kubernetes`` client's model of its kind and
written back: anything the model does not know (a misspelt or misplaced
field) would be lost on the way, so the round trip must give the object
unchanged. The MarsJob, which has no model, is checked against the fields of
KubeDL's CRD and its pod templates against ``V1PodTemplateSpec``. With
``kubectl`` and a cluster it can reach, ``kubectl apply --dry-run=client``
must accept the YAML too.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from mars.deploy.kubernetes import env_argv, manifests
from mars.deploy.kubernetes.objects import (
    DEFAULT_IMAGE,
    KUBEDL_API_VERSION,
    ClusterSpec,
    parse_quantity,
    worker_deployment,
)
from mars.deploy.oscar.cmdline import parse_args

kubernetes = pytest.importorskip("kubernetes")

MODELS = {"Namespace": "V1Namespace", "Secret": "V1Secret", "ConfigMap": "V1ConfigMap", "Service": "V1Service",
          "StatefulSet": "V1StatefulSet", "Deployment": "V1Deployment"}
#: the fields of KubeDL's MarsJob CRD (training.kubedl.io_marsjobs.yaml) that the manifests may use
MARSJOB_SPEC = {"cleanPodPolicy", "webHost", "workerMemoryTuningPolicy", "marsReplicaSpecs"}
TUNING = {"plasmaStore", "lockFreeFileIO", "spillDirs", "workerCachePercentage", "workerCacheSize"}
REPLICA = {"replicas", "restartPolicy", "template"}

VARIANTS = [
    {},
    {"namespace": "analytics", "supervisor_num": 3, "worker_num": 5, "worker_cpu": "1500m", "worker_mem": "6Gi",
     "worker_cache_mem": "2Gi", "worker_spill_paths": ["/spill/a", "/spill/b"], "web_port": 8080,
     "web_service_type": "LoadBalancer", "web_allow_hosts": ["mars.example.com"], "image": "registry/pymars:1"},
    {"worker_cache_mem": "60%", "web_service_type": "ClusterIP"},
]


def _round_trip(obj: dict) -> dict:
    api = kubernetes.client.ApiClient()
    model = api._ApiClient__deserialize(obj, MODELS[obj["kind"]])
    return api.sanitize_for_serialization(model)


@pytest.mark.parametrize("kwargs", VARIANTS)
def test_every_object_reads_into_its_client_model_unchanged(kwargs):
    docs = list(yaml.safe_load_all(manifests(**kwargs)))
    assert [d["kind"] for d in docs] == ["Namespace", "Secret", "ConfigMap", "Service", "Service", "StatefulSet",
                                         "Deployment"]
    for doc in docs:
        assert _round_trip(doc) == doc, doc["kind"]
    namespace = kwargs.get("namespace", "mars")
    assert {d["metadata"].get("namespace", namespace) for d in docs} == {namespace}


def test_the_pods_read_their_flags_from_the_environment_the_manifests_give():
    spec = ClusterSpec(namespace="ns", supervisor_num=2, worker_cache_mem="1Gi", worker_spill_paths=["/spill"])
    container = worker_deployment(spec)["spec"]["template"]["spec"]["containers"][0]
    # as the kubelet resolves it: downward API values stand in
    env = {e["name"]: e.get("value") for e in container["env"]}
    env.update(MARS_K8S_POD_NAME="mars-worker-x", MARS_CONTAINER_IP="10.0.0.5", MARS_CPU_TOTAL="2",
               MARS_MEMORY_TOTAL=str(4 << 30), MARS_TOKEN="t", MARS_K8S_POD_NAMESPACE="ns")
    worker = parse_args("worker", env_argv("worker", env))["worker"]
    assert worker["supervisors"] == ["mars-supervisor-0.mars-supervisor.ns.svc:7001",
                                     "mars-supervisor-1.mars-supervisor.ns.svc:7001"]
    assert (worker["host"], worker["advertise_address"], worker["port"]) == ("0.0.0.0", "10.0.0.5", 7003)
    assert (worker["n_cpu"], worker["cache_mem"], worker["spill_dirs"]) == (2, str(1 << 30), ["/spill"])
    assert {m["mountPath"] for m in container["volumeMounts"]} == {"/dev/shm", "/spill"}


def test_a_secret_holds_the_token_given_or_a_new_one_each_time():
    secret = list(yaml.safe_load_all(manifests(token="s3cret")))[1]
    assert secret["stringData"] == {"token": "s3cret"}
    first, second = (list(yaml.safe_load_all(manifests()))[1]["stringData"]["token"] for _ in range(2))
    assert first != second and len(first) >= 32


def test_the_default_image_is_the_dockerfiles_tag():
    import mars

    assert DEFAULT_IMAGE == f"pymars:{mars.__version__}"
    images = {c["image"] for d in yaml.safe_load_all(manifests()) if d["kind"] in ("StatefulSet", "Deployment")
              for c in d["spec"]["template"]["spec"]["containers"]}
    assert images == {DEFAULT_IMAGE}


@pytest.mark.parametrize("kwargs", VARIANTS)
def test_a_marsjob_has_kubedls_fields_and_pod_templates(kwargs):
    kwargs = {k: v for k, v in kwargs.items() if k not in ("web_service_type",)}
    docs = list(yaml.safe_load_all(manifests(kind="marsjob", web_host="mars.example.com", **kwargs)))
    assert [d["kind"] for d in docs] == ["Secret", "ConfigMap", "MarsJob"]
    for doc in docs[:2]:
        assert _round_trip(doc) == doc
    job = docs[2]
    assert (job["apiVersion"], job["spec"]["webHost"]) == (KUBEDL_API_VERSION, "mars.example.com")
    assert set(job["spec"]) <= MARSJOB_SPEC
    assert set(job["spec"].get("workerMemoryTuningPolicy", {})) <= TUNING
    roles = job["spec"]["marsReplicaSpecs"]
    assert set(roles) == {"Scheduler", "WebService", "Worker"}
    api = kubernetes.client.ApiClient()
    for role, module in (("Scheduler", "scheduler"), ("WebService", "web"), ("Worker", "worker")):
        assert set(roles[role]) <= REPLICA
        template = roles[role]["template"]
        model = api._ApiClient__deserialize(template, "V1PodTemplateSpec")
        assert api.sanitize_for_serialization(model) == template
        container = template["spec"]["containers"][0]
        assert container["name"] == "mars"  # the name KubeDL's controller looks for
        assert container["command"] == ["python", "-m", f"mars.deploy.kubernetes.{module}"]
    assert roles["Worker"]["replicas"] == kwargs.get("worker_num", 2)
    assert roles["Scheduler"]["replicas"] == kwargs.get("supervisor_num", 1)


@pytest.mark.parametrize("cache, field", [("2Gi", {"workerCacheSize": str(2 << 30)}),
                                          ("60%", {"workerCachePercentage": 60}), (None, None)])
def test_the_memory_tuning_policy_carries_the_cache_and_the_spill_dirs(cache, field):
    job = list(yaml.safe_load_all(manifests(kind="marsjob", worker_cache_mem=cache,
                                            worker_spill_paths=["/spill/0"])))[-1]
    assert job["spec"]["workerMemoryTuningPolicy"] == {"spillDirs": ["/spill/0"], **(field or {})}


def test_a_quantity_reads_as_the_api_server_reads_it():
    assert parse_quantity("1.5") == 1.5
    assert parse_quantity("250m") == parse_quantity("0.25")
    assert parse_quantity("1G") == 10**9 and parse_quantity("1Gi") == 1 << 30 and parse_quantity("1e3") == 1000
    for bad in ("", "1 Gi", "-1", "Gi", "1.2.3", True):
        with pytest.raises(ValueError, match="must be a Kubernetes quantity"):
            parse_quantity(bad)
    with pytest.raises(ValueError, match="kind must be 'cluster' or 'marsjob', got 'helm'"):
        manifests(kind="helm")


def _kubectl_reason() -> str | None:
    """Why ``kubectl apply --dry-run=client`` cannot run here, or None when it can."""
    if shutil.which("kubectl") is None:
        return "kubectl is not installed (Debian: apt install kubernetes-client)"
    probe = subprocess.run(["kubectl", "version", "--request-timeout=5s", "-o", "json"], capture_output=True,
                           text=True, timeout=30, check=False)
    if probe.returncode != 0 or '"serverVersion"' not in probe.stdout:
        # apply --dry-run=client still asks the server for its schemas and kinds
        return f"kubectl reaches no cluster to read its schemas from: {probe.stderr.strip()[:200]}"
    return None


@pytest.mark.parametrize("kind", ["cluster", "marsjob"])
def test_kubectl_accepts_the_yaml(kind):
    reason = _kubectl_reason()
    if reason is not None:
        pytest.skip(reason)
    text = manifests(kind=kind, **VARIANTS[1])
    done = subprocess.run(["kubectl", "apply", "--dry-run=client", "-f", "-"], input=text, capture_output=True,
                          text=True, timeout=120, check=False)
    if kind == "marsjob" and "no matches for kind" in done.stderr:
        pytest.skip(f"the cluster has no MarsJob CRD (KubeDL): {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr
