"""KubeDL's MarsJob: ``python -m mars.deploy.kubernetes.<role>`` starts from the environment its controller injects.

The contract (docs/kubernetes.md) is the env that KubeDL's mars controller
builds for each container: ``MARS_CLUSTER_DETAIL`` (JSON naming the
schedulers and web services by DNS name, and a worker's resources),
``MARS_BIND_PORT``, ``MARS_CONTAINER_IP``, ``MARS_CPU_TOTAL``,
``MARS_MEMORY_TOTAL`` and, for workers with a memory tuning policy,
``MARS_SPILL_DIRS`` (joined by commas), ``MARS_CACHE_MEM_SIZE`` (bytes),
``MARS_PLASMA_DIRS`` and ``MARS_LOCK_FREE_FILEIO``.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request

import numpy as np
import pytest
from process_nodes import Node, api_get

import mars
import mars.dataframe as md
import mars.tensor as mt
from mars.deploy import kubernetes
from mars.deploy.kubernetes import env_argv
from mars.deploy.oscar.cmdline import parse_args

GIB = 1 << 30


def _detail(task_type: str, index: int = 0, schedulers: tuple[str, ...] = ("job-scheduler-0.ns.svc:11111",),
            resources: dict | None = None, key: str = "scheduler") -> str:
    task: dict = {"type": task_type, "index": index}
    if resources is not None:
        task["resources"] = resources
    return json.dumps({"cluster": {key: list(schedulers), "webservice": ["job-webservice-0.ns.svc:11111"]},
                       "task": task})


def _kubedl_env(task_type: str, **extra: str) -> dict[str, str]:
    """The variables KubeDL's controller sets in every container of the job, plus ``extra``."""
    env = {"MARS_CPU_TOTAL": "2", "MARS_MEMORY_TOTAL": str(2 * GIB), "MARS_CPU_USE_PROCESS_STAT": "1",
           "MARS_MEM_USE_CGROUP_STAT": "1", "MARS_BIND_PORT": "11111", "MARS_K8S_GROUP_LABELS": "job-name",
           "MARS_CONTAINER_IP": "10.0.0.7", "MARS_K8S_POD_NAME": f"job-{task_type}-0",
           "MARS_K8S_POD_NAMESPACE": "ns"}
    resources = {"cpu_procs": 2, "phy_mem": 2 * GIB} if task_type == "worker" else None
    env["MARS_CLUSTER_DETAIL"] = _detail(task_type, resources=resources)
    env.update(extra)
    return env


# ---------------------------------------------------------------------- env -> flags, by role
def test_a_worker_binds_every_interface_advertises_the_pod_ip_and_joins_the_schedulers_by_name():
    env = _kubedl_env("worker", MARS_SPILL_DIRS="/spill/0,/spill/1", MARS_CACHE_MEM_SIZE=str(GIB // 2))
    assert env_argv("worker", env) == [
        "-H", "0.0.0.0", "-a", "10.0.0.7", "-s", "job-scheduler-0.ns.svc:11111", "-p", "11111",
        "--n-cpu", "2", "--phy-mem", str(2 * GIB), "--cache-mem", str(GIB // 2),
        "--spill-dirs", os.pathsep.join(["/spill/0", "/spill/1"])]
    worker = parse_args("worker", env_argv("worker", env))["worker"]
    assert (worker["host"], worker["advertise_address"], worker["port"]) == ("0.0.0.0", "10.0.0.7", 11111)
    assert worker["supervisors"] == ["job-scheduler-0.ns.svc:11111"]
    assert (worker["n_cpu"], worker["spill_dirs"]) == (2, ["/spill/0", "/spill/1"])


def test_a_scheduler_lists_itself_by_the_address_it_advertises_not_its_dns_name():
    env = _kubedl_env("scheduler", MARS_CLUSTER_DETAIL=_detail(
        "scheduler", index=1, schedulers=("job-scheduler-0.ns.svc:11111", "job-scheduler-1.ns.svc:11111")))
    cfg = parse_args("scheduler", env_argv("scheduler", env))
    sup = cfg["supervisor"]
    assert sup["supervisors"] == ["job-scheduler-0.ns.svc:11111", "10.0.0.7:11111"]
    assert (sup["host"], sup["port"], sup["web"]) == ("0.0.0.0", 11111, False)
    assert "--n-cpu" not in env_argv("scheduler", env) and "--phy-mem" not in env_argv("scheduler", env)


def test_the_web_service_serves_on_the_bind_port_for_the_schedulers():
    env = _kubedl_env("webservice")
    assert env_argv("web", env) == ["-H", "0.0.0.0", "-a", "10.0.0.7", "-s", "job-scheduler-0.ns.svc:11111",
                                    "-p", "11111"]
    web = parse_args("web", env_argv("web", env))["web"]
    assert (web["host"], web["port"], web["supervisors"]) == ("0.0.0.0", 11111, ["job-scheduler-0.ns.svc:11111"])


def test_later_versions_name_it_task_detail_with_supervisors_and_phy_mem_in_mib():
    env = _kubedl_env("worker", MARS_TASK_DETAIL=_detail("worker", key="supervisor", schedulers=("sv-0:7001",),
                                                         resources={"cpu_procs": 3, "phy_mem": 1024}))
    del env["MARS_CLUSTER_DETAIL"]
    argv = env_argv("worker", env)
    assert argv[argv.index("-s") + 1] == "sv-0:7001"
    assert argv[argv.index("--n-cpu") + 1] == "3"
    assert argv[argv.index("--phy-mem") + 1] == str(GIB)  # 1024 MiB


def test_without_resources_in_the_detail_the_container_limits_size_the_worker():
    env = _kubedl_env("worker", MARS_CPU_TOTAL="1.5", MARS_MEMORY_TOTAL=str(3 * GIB),
                      MARS_CLUSTER_DETAIL=_detail("worker"))
    argv = env_argv("worker", env)
    assert argv[argv.index("--n-cpu") + 1] == "2"  # rounded up
    assert argv[argv.index("--phy-mem") + 1] == str(3 * GIB)
    assert env_argv("worker", {"MARS_CPU_TOTAL": "0"})[1] == "1"  # a worker has at least one slot


def test_flags_typed_and_our_own_variables_win_over_kubedls():
    env = _kubedl_env("worker", MARS_SUPERVISOR_ADDRESSES="10.9.9.9:7001")
    cfg = parse_args("worker", env_argv("worker", env) + ["-H", "10.0.0.7", "--n-cpu", "1"])["worker"]
    assert (cfg["supervisors"], cfg["host"], cfg["n_cpu"]) == (["10.9.9.9:7001"], "10.0.0.7", 1)


def test_a_token_file_is_given_by_variable():
    assert env_argv("web", {"MARS_TOKEN_FILE": "/var/run/secrets/mars/token"}) == [
        "--token-file", "/var/run/secrets/mars/token"]


@pytest.mark.parametrize("detail, expected", [
    ("{not json", "MARS_CLUSTER_DETAIL is not valid JSON"),
    ("[1, 2]", "MARS_CLUSTER_DETAIL must be a JSON object with 'cluster' and 'task', got list"),
    ('{"cluster": []}', "MARS_CLUSTER_DETAIL: 'cluster' must be an object, got []"),
    ('{"cluster": {"scheduler": ["no-port"]}}', "MARS_CLUSTER_DETAIL: 'cluster.scheduler' must be a list of"),
    ('{"task": {"resources": {"cpu_procs": "two"}}}',
     "MARS_CLUSTER_DETAIL: 'task.resources.cpu_procs' must be a non-negative integer, got \"two\""),
])
def test_a_bad_detail_is_a_usage_error_naming_the_variable_and_the_part(detail, expected, monkeypatch, capsys):
    with pytest.raises(ValueError, match="^" + expected.replace("[", r"\[").replace("]", r"\]")):
        env_argv("worker", {"MARS_CLUSTER_DETAIL": detail})
    monkeypatch.setattr(os, "environ", {"MARS_CLUSTER_DETAIL": detail})
    assert kubernetes.main("worker", []) == 2
    assert capsys.readouterr().err.startswith(f"mars-worker: error: {expected}")


def test_plasma_and_lock_free_settings_are_accepted_and_say_why_they_are_not_needed():
    env = {"MARS_PLASMA_DIRS": "/etc/pstore", "MARS_LOCK_FREE_FILEIO": "1"}
    lines = kubernetes.not_needed("worker", env)
    assert [line.split(" ", 1)[0] for line in lines] == ["MARS_PLASMA_DIRS=/etc/pstore", "MARS_LOCK_FREE_FILEIO=1"]
    assert "no plasma store" in lines[0] and "take no locks" in lines[1]
    assert env_argv("worker", env) == []  # no flag stands for them
    assert kubernetes.not_needed("scheduler", env) == []


# ---------------------------------------------------------------------- real processes
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, token: str | None = None) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _wait_for_workers(url: str, token: str, n: int, timeout: float = 90) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        try:
            alive = [w for w in api_get(url, "/api/cluster/workers", token) if w["state"] == "alive"]
        except (AssertionError, OSError):  # the web service may not reach the scheduler yet
            alive = []
        if len(alive) >= n or time.monotonic() > deadline:
            return alive
        time.sleep(0.5)


@pytest.mark.timeout(240)
def test_a_marsjob_runs_the_seed_snippet_with_the_worker_started_first(tmp_path):
    token = "kubedl-secret-token"
    sched_port, web_port, worker_port = _free_port(), _free_port(), _free_port()
    cluster = {"scheduler": [f"127.0.0.1:{sched_port}"], "webservice": [f"127.0.0.1:{web_port}"]}
    spill = [str(tmp_path / "spill-0"), str(tmp_path / "spill-1")]

    def env(task_type: str, port: int, **extra: str) -> dict[str, str]:
        task: dict = {"type": task_type, "index": 0}
        if task_type == "worker":
            task["resources"] = {"cpu_procs": 1, "phy_mem": 2 * GIB}
        return {"MARS_CLUSTER_DETAIL": json.dumps({"cluster": cluster, "task": task}), "MARS_BIND_PORT": str(port),
                "MARS_CONTAINER_IP": "127.0.0.1", "MARS_TOKEN": token, "MARS_CPU_TOTAL": "1",
                "MARS_MEMORY_TOTAL": str(2 * GIB), "MARS_CPU_USE_PROCESS_STAT": "1", "MARS_MEM_USE_CGROUP_STAT": "1",
                "MARS_K8S_POD_NAME": f"job-{task_type}-0", "MARS_K8S_POD_NAMESPACE": "default",
                "MARS_K8S_GROUP_LABELS": "job-name", **extra}

    nodes: list[Node] = []
    try:
        # KubeDL starts the pods together: the worker and web service before their scheduler answers
        worker = Node("worker", env=env("worker", worker_port, MARS_SPILL_DIRS=",".join(spill),
                                         MARS_CACHE_MEM_SIZE=str(256 << 20), MARS_PLASMA_DIRS="/dev/shm",
                                         MARS_LOCK_FREE_FILEIO="1"), package="mars.deploy.kubernetes")
        nodes.append(worker)
        assert "MARS_PLASMA_DIRS=/dev/shm is accepted and not needed" in worker.wait_for("MARS_PLASMA_DIRS")
        worker.wait_for(f"Mars worker started at 127.0.0.1:{worker_port}")
        web = Node("web", env=env("webservice", web_port), package="mars.deploy.kubernetes")
        nodes.append(web)
        web.wait_for(f"Mars Web started at http://127.0.0.1:{web_port}")
        url = f"http://127.0.0.1:{web_port}"

        # a probe has no token: it learns that the server is up, and nothing else
        assert _get(url + "/api/health") == (200, b'{"status": "ok"}')
        assert _get(url + "/api/cluster/workers")[0] == 401
        # with it, a call that needs the scheduler says it is not there yet
        assert _get(url + "/api/cluster/workers", token)[0] == 503

        time.sleep(2)  # the worker keeps retrying meanwhile
        assert worker.alive
        sched = Node("scheduler", env=env("scheduler", sched_port), package="mars.deploy.kubernetes")
        nodes.append(sched)
        sched.wait_for(f"Mars scheduler started at 127.0.0.1:{sched_port}")

        alive = _wait_for_workers(url, token, 1)
        assert [(w["address"], w["n_cpu"], w["memory_limit"]) for w in alive] == [
            (f"127.0.0.1:{worker_port}", 1, 2 * GIB)]

        # seed 004's snippet, at a size a loaded test machine runs quickly
        with mars.new_session(url, token=token, default=False) as sess:
            sess.as_default()
            a = mt.ones((400, 400), chunk_size=100)
            b = mt.inner(a, a)
            np.testing.assert_array_equal(b.execute().fetch(), np.full((400, 400), 400.0))
            df = md.DataFrame(a).sum()
            np.testing.assert_array_equal(df.execute().fetch().to_numpy(), np.full(400, 400.0))
    finally:
        codes = [node.stop() for node in reversed(nodes)]
    assert codes == [0] * len(nodes), "".join(line for node in nodes for line in node.output)


@pytest.mark.timeout(120)
def test_a_worker_keeps_retrying_a_scheduler_whose_name_does_not_resolve_yet():
    worker = Node("worker", "--log-level", "info", env={
        "MARS_CLUSTER_DETAIL": _detail("worker", schedulers=("job-scheduler-0.ns.svc.invalid:11111",),
                                       resources={"cpu_procs": 1, "phy_mem": GIB}),
        "MARS_BIND_PORT": str(_free_port()), "MARS_CONTAINER_IP": "127.0.0.1", "MARS_TOKEN": "t"},
        package="mars.deploy.kubernetes")
    try:
        worker.wait_for("Mars worker started at")
        line = worker.wait_for("job-scheduler-0.ns.svc.invalid:11111 not reachable yet", timeout=30)
        assert "retrying" in line
        time.sleep(3)
        assert worker.alive
    finally:
        assert worker.stop() == 0
