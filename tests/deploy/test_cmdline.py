"""mars-supervisor / mars-worker / mars-scheduler / mars-web as a user types them.

Flag parsing and config merging are tested through :func:`parse_args`; the
process behaviour (ports in use, signals, logging files) by running the
command line as a subprocess with a fake node module put in place of
``mars.deploy.oscar.node``, so no cluster starts.
"""

from __future__ import annotations

import os
import pathlib
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from mars.deploy.kubernetes import env_argv
from mars.deploy.oscar.cmdline import parse_args, primary_ip
from mars.deploy.oscar.config import ConfigError, deep_merge, default_config, load_config

FAKE_NODE = '''
import asyncio, errno, logging, os

class Node:
    def __init__(self, address, web_address=None):
        self.address, self.web_address = address, web_address

    async def stop(self):
        await asyncio.sleep(0.05)
        print("fake node stopped", flush=True)

async def _start(role, node, web_address=None):
    print(f"fake {role} starting", flush=True)
    logging.getLogger("mars.fake").info("fake %s starting", role)
    how = os.environ.get("FAKE_NODE", "")
    if how == "addrinuse":
        raise OSError(errno.EADDRINUSE,
                      "error while attempting to bind on address ('127.0.0.1', 4321): address already in use")
    if how == "boom":
        raise RuntimeError("the fake node broke")
    if how == "hang":
        await asyncio.sleep(3600)
    return Node(f"{node['advertise_address'] or node['host']}:{node['port'] or 4000}", web_address)

async def start_supervisor(config):
    sup = config["supervisor"]
    web = f"http://{sup['host']}:{sup['web_port'] or 4001}" if sup["web"] else None
    return await _start("supervisor", sup, web)

async def start_worker(config):
    return await _start("worker", config["worker"])

async def start_web(config):
    node = await _start("web", config["web"])
    node.web_address = f"{config['web']['host']}:{config['web']['port'] or 4002}"
    return node
'''

# the CLI in a fresh interpreter with the fake node module in place of the real one
BOOT = (
    "import sys, fake_node; sys.modules['mars.deploy.oscar.node'] = fake_node; "
    "from mars.deploy.oscar.cmdline import main; sys.exit(main(sys.argv[1], sys.argv[2:]))"
)
SUP = "127.0.0.1:7001"


@pytest.fixture
def cli(tmp_path):
    """Start the CLI of a role with the fake node: ``cli(role, *args, env={...})`` → Popen."""
    (tmp_path / "fake_node.py").write_text(FAKE_NODE)
    procs: list[subprocess.Popen] = []

    def start(role: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        full_env = {**os.environ, **(env or {})}
        full_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
        proc = subprocess.Popen([sys.executable, "-c", BOOT, role, *args], env=full_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)  # reaps it and closes its pipes


def _wait_for(proc: subprocess.Popen, text: str, timeout: float = 15.0) -> str:
    """Stdout up to the first line holding ``text``; fails with what was seen when it does not come."""
    fd, seen = proc.stdout.fileno(), b""
    deadline = time.monotonic() + timeout
    while text.encode() not in seen:
        left = deadline - time.monotonic()
        ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
        chunk = os.read(fd, 65536) if ready else b""
        if not chunk:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            raise AssertionError(f"no {text!r} on stdout; got {seen!r}, stderr {err!r}")
        seen += chunk
    return seen.decode()


def _run(cli, role: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = cli(role, *args, env=env)
    out, err = proc.communicate(timeout=20)
    return proc.returncode, out.decode(), err.decode()


# -- flags into config


def test_worker_flags_land_on_their_config_keys(tmp_path) -> None:
    cfg = parse_args("worker", [
        "-H", "127.0.0.1", "-p", "7003", "-s", "10.0.0.1:7001, 10.0.0.2:7002", "-a", "127.0.0.1",
        "--n-cpu", "8", "--n-io-process", "2", "--cuda-devices", "0,1", "--cache-mem", "4G",
        "--spill-dirs", f"{tmp_path}/a:~/b", "--phy-mem", "90%", "--metrics-port", "9100", "--log-level", "debug",
        "--log-format", "%(message)s", "--log-conf", "log.ini", "--use-uvloop", "no",
        "--token", "s3cret", "--insecure",
    ])  # fmt: skip
    assert cfg["worker"] == {
        "host": "127.0.0.1", "port": 7003, "supervisors": ["10.0.0.1:7001", "10.0.0.2:7002"],
        "advertise_address": "127.0.0.1", "n_cpu": 8, "n_io_process": 2, "cuda_devices": [0, 1],
        "cache_mem": "4g", "spill_dirs": [f"{tmp_path}/a", os.path.expanduser("~/b")], "phy_mem": "90%",
        "cancel_grace": 2.0, "slots_in_process": False, "metrics_port": 9100,
    }  # fmt: skip
    assert cfg["logging"] == {"level": "DEBUG", "format": "%(message)s", "conf": "log.ini"}
    assert cfg["oscar"] == {"use_uvloop": "no", "start_method": "spawn"}
    assert cfg["security"] == {"token": "s3cret", "insecure": True, "token_file": None, "tls_cert": None,
                               "tls_key": None, "tls_ca": None, "metrics_token": None}
    assert cfg["supervisor"] == default_config()["supervisor"]  # only the role's section moves


def test_supervisor_flags_and_defaults() -> None:
    cfg = parse_args("supervisor", ["-H", "127.0.0.1", "-p", "7001", "-w", "7005", "-s", "127.0.0.1:7001,h2:7002"])
    assert cfg["supervisor"] == {
        "host": "127.0.0.1", "port": 7001, "web": True, "web_port": 7005,
        "supervisors": ["127.0.0.1:7001", "h2:7002"], "advertise_address": None, "session_history": 50,
    }  # fmt: skip
    plain = parse_args("supervisor", [])
    assert plain == load_config()
    assert plain["supervisor"]["host"] == "127.0.0.1" and plain["supervisor"]["port"] == 0
    assert plain["logging"]["level"] == "WARNING" and plain["oscar"]["use_uvloop"] == "auto"


def test_worker_defaults_read_from_the_shipped_file() -> None:
    worker = parse_args("worker", ["-s", SUP])["worker"]
    assert (worker["n_cpu"], worker["n_io_process"], worker["cuda_devices"]) == ("auto", 1, [])  # GPU slots only when asked for
    assert (worker["cache_mem"], worker["phy_mem"], worker["spill_dirs"]) == ("40%", "90%", [])


def test_scheduler_is_a_supervisor_without_web(capsys) -> None:
    cfg = parse_args("scheduler", ["-a", "127.0.0.1", "-p", "7001", "-s", "127.0.0.1:7001"])
    assert cfg["supervisor"]["web"] is False
    assert cfg["supervisor"]["port"] == 7001 and cfg["supervisor"]["advertise_address"] == "127.0.0.1"
    with pytest.raises(SystemExit) as exc:
        parse_args("scheduler", ["-w", "7005"])
    assert exc.value.code == 2 and "-w" in capsys.readouterr().err


def test_web_role_reads_its_own_section() -> None:
    cfg = parse_args("web", ["-p", "7005", "-s", "127.0.0.1:7001,127.0.0.1:7002", "-a", "127.0.0.1"])
    assert cfg["web"] == {"host": "127.0.0.1", "port": 7005, "supervisors": ["127.0.0.1:7001", "127.0.0.1:7002"],
                          "advertise_address": "127.0.0.1", "max_body": 1 << 30, "header_timeout": 30.0,
                          "keepalive_timeout": 75.0, "allow_origins": [], "allow_hosts": []}


def test_flags_of_the_old_docs_still_work() -> None:
    cfg = parse_args("worker", ["--schedulers", SUP, "--cpu-procs", "3", "--net-procs", "2",
                                "--cuda-device", "1", "--spill-dir", "/x:/y"])
    w = cfg["worker"]
    assert (w["supervisors"], w["n_cpu"], w["n_io_process"], w["cuda_devices"], w["spill_dirs"]) == (
        [SUP], 3, 2, [1], ["/x", "/y"])


@pytest.mark.parametrize("text, expected", [("", []), ("auto", "auto"), ("all", "auto"), ("2", [2]), ("0, 3", [0, 3])])
def test_cuda_devices_forms(text: str, expected) -> None:
    # the seeds: unset means every device, an empty string means none
    assert parse_args("worker", ["-s", SUP, "--cuda-devices", text])["worker"]["cuda_devices"] == expected


@pytest.mark.parametrize("role, args, flag", [
    ("worker", ["--n-cpu", "-2"], "--n-cpu"),
    ("worker", ["--n-cpu", "0"], "--n-cpu"),
    ("worker", ["--cache-mem", "lots"], "--cache-mem"),
    ("worker", ["--phy-mem", "150%"], "--phy-mem"),
    ("worker", ["--n-io-process", "-1"], "--n-io-process"),
    ("worker", ["--cuda-devices", "1,1"], "--cuda-devices"),
    ("worker", ["--cuda-devices", "gpu0"], "--cuda-devices"),
    ("supervisor", ["-p", "70000"], "-p/--port"),
    ("supervisor", ["-w", "http"], "-w/--web-port"),
    ("supervisor", ["-H", "10.0.0.1:7001"], "-H/--host"),
    ("supervisor", ["-s", "10.0.0.1"], "-s/--supervisors"),
    ("supervisor", ["--log-level", "loud"], "--log-level"),
    ("supervisor", ["--use-uvloop", "maybe"], "--use-uvloop"),
])  # fmt: skip
def test_a_bad_flag_value_is_one_line_naming_flag_and_value(capsys, role, args, flag) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(role, ["-s", SUP, *args] if role == "worker" else args)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.count("\n") == 1 and err.startswith(f"mars-{role}: error: argument {flag}: ")
    assert repr(args[-1]) in err or args[-1] in err


@pytest.mark.parametrize("role, args, said", [
    ("worker", ["--nproc", "4"], "--nproc was renamed: use --n-cpu"),
    ("worker", ["--nproc=4"], "--nproc was renamed: use --n-cpu"),
    ("worker", ["--min-mem", "1g"], ("--min-mem is not needed: chunks live in the worker's shared memory, sized by "
                                     "--cache-mem")),
    ("worker", ["--plasma-dir", "/dev/shm"], "--plasma-dir is not needed: there is no plasma store"),
    ("worker", ["--plasma-dir"], "--plasma-dir is not needed: there is no plasma store"),
    ("web", ["--ui-port", "7005"], "--ui-port was renamed: use -p"),
])  # fmt: skip
def test_a_legacy_flag_is_one_line_naming_its_replacement(capsys, role, args, said) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(role, ["-s", SUP, *args])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.count("\n") == 1 and err.startswith(f"mars-{role}: error: {said}")
    assert "unrecognized" not in err


@pytest.mark.parametrize("role", ["worker", "web"])
def test_worker_and_web_need_a_supervisor(capsys, role) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(role, [])
    assert exc.value.code == 2 and "no supervisor given" in capsys.readouterr().err


def test_same_port_for_service_and_web_is_refused(capsys) -> None:
    with pytest.raises(SystemExit):
        parse_args("supervisor", ["-p", "7001", "-w", "7001"])
    assert "-p and -w are both 7001" in capsys.readouterr().err


# -- addresses


def test_any_host_advertises_the_primary_ip() -> None:
    sup = parse_args("supervisor", ["-H", "0.0.0.0"])["supervisor"]
    assert sup["host"] == "0.0.0.0" and sup["advertise_address"] == primary_ip() != "0.0.0.0"


def test_advertise_alone_binds_that_address_or_every_interface() -> None:
    # the legacy command lines give only -a: a local address is bound, a NAT/container one cannot be
    assert parse_args("scheduler", ["-a", "127.0.0.1"])["supervisor"]["host"] == "127.0.0.1"
    far = parse_args("scheduler", ["-a", "203.0.113.7"])["supervisor"]  # TEST-NET-3: never this machine's
    assert (far["host"], far["advertise_address"]) == ("0.0.0.0", "203.0.113.7")
    given = parse_args("scheduler", ["-a", "203.0.113.7", "-H", "127.0.0.1"])["supervisor"]
    assert given["host"] == "127.0.0.1"


# -- config files


def test_file_overrides_defaults_and_flags_override_the_file(tmp_path) -> None:
    path = tmp_path / "mars.yml"
    path.write_text("worker:\n  n_cpu: 6\n  cache_mem: 2g\n  supervisors: [10.0.0.1:7001]\n"
                    "cluster: {worker_timeout: 30}\nlogging: {level: info}\n")
    cfg = parse_args("worker", ["-f", str(path), "--n-cpu", "2"])
    assert cfg["worker"]["n_cpu"] == 2  # the flag wins over the file
    assert cfg["worker"]["cache_mem"] == "2g" and cfg["worker"]["supervisors"] == ["10.0.0.1:7001"]
    assert cfg["cluster"] == {"heartbeat_interval": 1.0, "worker_timeout": 30.0}  # merged key by key
    assert cfg["logging"]["level"] == "INFO" and cfg["worker"]["phy_mem"] == "90%"
    assert load_config(path)["worker"]["n_cpu"] == 6


def test_an_unknown_key_in_the_file_is_named(tmp_path, capsys) -> None:
    path = tmp_path / "mars.yml"
    path.write_text("worker:\n  n_cpus: 4\n")
    with pytest.raises(ConfigError, match=r"unknown key 'worker\.n_cpus' \(did you mean worker\.n_cpu\?\)"):
        load_config(path)
    with pytest.raises(SystemExit) as exc:
        parse_args("worker", ["-s", SUP, "-f", str(path)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "'worker.n_cpus'" in err and str(path) in err
    path.write_text("workers: {n_cpu: 4}\n")
    with pytest.raises(ConfigError, match="unknown key 'workers'"):
        load_config(path)


@pytest.mark.parametrize("text, message", [
    ("worker: {n_cpu: -1}\n", "config key worker.n_cpu: must be a positive integer"),
    ("supervisor: {port: 99999}\n", "config key supervisor.port: must be a port number"),
    ("worker: 4\n", "'worker' must be a mapping"),
    ("- a\n- b\n", "must hold a mapping of sections"),
    ("worker: {n_cpu: [\n", "is not valid YAML at line"),
])  # fmt: skip
def test_a_bad_file_says_which_key_and_why(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "mars.yml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_config(path)


def test_a_missing_file_is_a_config_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "nope.yml")


def test_deep_merge_merges_mappings_and_replaces_the_rest() -> None:
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 2}
    merged = deep_merge(base, {"a": {"y": [3]}, "c": {"z": 1}})
    assert merged == {"a": {"x": 1, "y": [3]}, "b": 2, "c": {"z": 1}}
    assert base == {"a": {"x": 1, "y": [1, 2]}, "b": 2}  # untouched


def test_load_config_takes_the_node_codes_own_knobs() -> None:
    # what new_cluster and the service tests pass: no web port, in-process slots, no IO processes
    cfg = load_config(overrides={"supervisor": {"web_port": None},
                                 "worker": {"slots_in_process": True, "n_io_process": 0}})
    assert cfg["supervisor"]["web_port"] is None and cfg["worker"]["slots_in_process"] is True


def test_kubernetes_reads_defaults_from_the_pod_environment() -> None:
    env = {"MARS_K8S_POD_IP": "127.0.0.1", "MARS_SUPERVISOR_ADDRESSES": "10.0.0.1:7001",
           "MARS_K8S_SERVICE_PORT": "7003", "MARS_CPU_TOTAL": "2.5", "MARS_WEB_PORT": "7005"}
    assert env_argv("worker", env) == ["-a", "127.0.0.1", "-s", "10.0.0.1:7001", "-p", "7003", "--n-cpu", "3"]
    cfg = parse_args("worker", env_argv("worker", env) + ["--n-cpu", "1"])
    assert cfg["worker"]["n_cpu"] == 1  # typed flags still win
    assert (cfg["worker"]["host"], cfg["worker"]["advertise_address"]) == ("127.0.0.1", "127.0.0.1")
    assert "--n-cpu" not in env_argv("supervisor", env) and "-w" in env_argv("supervisor", env)


# -- the process


@pytest.mark.parametrize("flag", ["-p", "-w"])
def test_a_port_in_use_is_one_line_and_exit_1(cli, flag: str) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        code, out, err = _run(cli, "supervisor", flag, str(port))
    assert code == 1
    assert err == f"mars-supervisor: port {port} on 127.0.0.1 is already in use\n"
    assert "starting" not in out  # the check comes before anything starts


def test_address_in_use_raised_while_starting_becomes_the_same_line(cli) -> None:
    code, out, err = _run(cli, "worker", "-s", SUP, env={"FAKE_NODE": "addrinuse"})
    assert (code, err) == (1, "mars-worker: port 4321 on 127.0.0.1 is already in use\n")


def test_another_start_failure_is_one_line(cli) -> None:
    code, out, err = _run(cli, "web", "-s", SUP, env={"FAKE_NODE": "boom"})
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("mars-web: failed to start: RuntimeError: the fake node broke")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_node_and_exits_0(cli, sig: signal.Signals) -> None:
    proc = cli("supervisor", "-p", "0", "-w", "0")
    out = _wait_for(proc, "Mars Web started at http://127.0.0.1:4001")
    assert "Mars supervisor started at 127.0.0.1:4000" in out
    sent = time.monotonic()
    proc.send_signal(sig)
    rest, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert time.monotonic() - sent < 5
    assert "fake node stopped" in rest.decode()  # node.stop() was awaited


def test_a_signal_during_a_slow_start_exits_0(cli) -> None:
    proc = cli("worker", "-s", SUP, env={"FAKE_NODE": "hang"})
    _wait_for(proc, "fake worker starting")
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)
    assert proc.returncode == 0


LOG_INI = """\
[loggers]
keys=root
[handlers]
keys=file
[formatters]
keys=plain
[logger_root]
level=INFO
handlers=file
[handler_file]
class=FileHandler
formatter=plain
args=({path!r}, 'w')
[formatter_plain]
format=FROM-CONF %(name)s %(message)s
"""
LOG_YAML = """\
version: 1
formatters: {{plain: {{format: "FROM-CONF %(name)s %(message)s"}}}}
handlers: {{file: {{class: logging.FileHandler, formatter: plain, filename: {path!r}, mode: w}}}}
root: {{level: INFO, handlers: [file]}}
"""


@pytest.mark.parametrize("name, template", [("logging.ini", LOG_INI), ("logging.yaml", LOG_YAML)])
def test_log_conf_file_applies(cli, tmp_path: pathlib.Path, name: str, template: str) -> None:
    log_path = tmp_path / "node.log"
    conf = tmp_path / name
    conf.write_text(textwrap.dedent(template.format(path=str(log_path))))
    proc = cli("worker", "-s", SUP, "--log-conf", str(conf))
    _wait_for(proc, "Mars worker started at 127.0.0.1:4000")
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)
    assert proc.returncode == 0
    # INFO gets through although the default level is WARNING: the file decides
    assert "FROM-CONF mars.fake fake worker starting" in log_path.read_text()


def test_a_broken_log_conf_is_one_line_and_exit_2(cli, tmp_path) -> None:
    conf = tmp_path / "logging.ini"
    conf.write_text("[loggers]\nkeys=root\n")
    code, _, err = _run(cli, "worker", "-s", SUP, "--log-conf", str(conf))
    assert code == 2 and err.count("\n") == 1 and "cannot be applied" in err and str(conf) in err


@pytest.mark.parametrize("module", ["mars.deploy.oscar.supervisor", "mars.deploy.oscar.worker",
                                    "mars.deploy.oscar.scheduler", "mars.deploy.oscar.web",
                                    "mars.deploy.kubernetes.supervisor", "mars.deploy.kubernetes.worker",
                                    "mars.deploy.kubernetes.scheduler", "mars.deploy.kubernetes.web"])
def test_python_dash_m_entry_points(module: str) -> None:
    result = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=20)
    role = module.rsplit(".", 1)[1]
    assert result.returncode == 0 and result.stdout.startswith(f"usage: mars-{role} ")


def test_console_scripts_are_installed() -> None:
    script = pathlib.Path(sys.executable).parent / "mars-supervisor"
    if not script.exists():
        pytest.skip("the package is not installed with its scripts (pip install -e .)")
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=20)
    assert result.returncode == 0 and "-w PORT, --web-port PORT" in result.stdout
