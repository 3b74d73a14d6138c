"""The command lines of the distributed runtime: mars-supervisor, mars-worker, mars-scheduler, mars-web.

One parser per role turns flags into config keys (each flag's ``dest`` *is*
its dotted key, so there is no second table to keep in step); the shipped
defaults, the ``-f`` file and the flags are merged by :mod:`.config`; then
:func:`main` checks the ports, starts the node from ``.node`` and serves
until SIGINT or SIGTERM. Exit codes: 0 stopped cleanly, 1 could not start
(a port in use, ...), 2 a bad flag or config value.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import logging
import os
import re
import signal
import socket
import sys
import textwrap
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, NoReturn

from ...oscar.loop import resolve_uvloop, run
from . import config
from .logconf import configure_logging

logger = logging.getLogger(__name__)

ROLES = ("supervisor", "worker", "scheduler", "web")
#: The config section each role reads: a scheduler is a supervisor without web.
SECTIONS = {"supervisor": "supervisor", "scheduler": "supervisor", "worker": "worker", "web": "web"}
_ANY_HOST = ("0.0.0.0", "::", "")

_DESCRIPTIONS = {
    "supervisor": "Start a Mars supervisor: it schedules the work of the workers that join it "
    "and serves the web API and dashboard (clients connect with mars.new_session('http://host:web_port')).",
    "scheduler": "Start a Mars scheduler: a supervisor without the web service "
    "(the legacy role; pair it with mars-web).",
    "worker": "Start a Mars worker: it joins the supervisors given with -s and computes chunks "
    "in one process per CPU core it is given.",
    "web": "Start the Mars web service alone (the legacy role), serving the cluster of the supervisors given with -s.",
}
_EXAMPLES = {
    "supervisor": "mars-supervisor -H 192.168.1.10 -p 7001 -w 7005\n"
    "  mars-supervisor -H 192.168.1.11 -p 7002 -s 192.168.1.10:7001,192.168.1.11:7002",
    "scheduler": "mars-scheduler -a 192.168.1.10 -p 7001",
    "worker": "mars-worker -H 192.168.1.20 -p 7003 -s 192.168.1.10:7001 --n-cpu 8 \\\n"
    "      --cache-mem 16g --spill-dirs /mnt/disk2/spill:/mnt/disk3/spill",
    "web": "mars-web -p 7005 -s 192.168.1.10:7001",
}


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is the single line that names the flag."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


#: flags of the pre-0.7 command lines that mean nothing here any more, by role: what the error says of each
_RETIRED_FLAGS = {
    "worker": {
        "--nproc": "was renamed: use --n-cpu",
        "--min-mem": "is not needed: chunks live in the worker's shared memory, sized by --cache-mem",
        "--plasma-dir": ("is not needed: there is no plasma store; chunks live in the worker's shared memory, "
                         "sized by --cache-mem"),
    },
    "web": {"--ui-port": "was renamed: use -p"},
}


class _Retired(argparse.Action):
    """A flag that was removed: giving it, with or without a value, is a usage error saying what to do instead."""

    def __init__(self, option_strings: list[str], dest: str, why: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs="?", help=argparse.SUPPRESS, **kwargs)
        self.why = why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error(f"{option_string} {self.why}")


class StartError(Exception):
    """The node could not start; the message is the one line shown to the user (exit 1)."""


def _flag_type(check: Callable[[Any], Any]) -> Callable[[str], Any]:
    """A ``type=`` for argparse from a config rule, so flags and file keys fail alike."""

    def convert(text: str) -> Any:
        try:
            return check(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = check.__name__.removeprefix("check_")
    return convert


def build_parser(role: str) -> argparse.ArgumentParser:
    """The argument parser of ``mars-<role>``; flags it was not given are absent from its namespace."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    parser = _Parser(
        prog=f"mars-{role}",
        description=textwrap.fill(_DESCRIPTIONS[role], 79),
        epilog=f"example:\n  {_EXAMPLES[role]}\n\nFlags override the -f file, which overrides the "
        "defaults in mars/deploy/oscar/config.yml;\n[key] names the config key a flag sets.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        argument_default=argparse.SUPPRESS,  # so only the flags given override the config
    )
    _add_address_flags(parser, role)
    if role == "worker":
        _add_worker_flags(parser)
    _add_common_flags(parser)
    for flag, why in _RETIRED_FLAGS.get(role, {}).items():
        parser.add_argument(flag, dest=f"retired{flag}", action=_Retired, why=why)
    return parser


def _add_address_flags(parser: argparse.ArgumentParser, role: str) -> None:
    s = SECTIONS[role]
    what = "the web service" if role == "web" else "the service"
    parser.add_argument("-H", "--host", dest=f"{s}.host", metavar="HOST", type=_flag_type(config.check_host),
                        help="address to bind (default 127.0.0.1, this machine only; 0.0.0.0 binds every "
                        f"interface; with -a alone, the advertised address) [{s}.host]")
    parser.add_argument("-p", "--port", dest=f"{s}.port", metavar="PORT", type=_flag_type(config.check_port),
                        help=f"port of {what} (default 0: a free port, printed at start) [{s}.port]")
    if role == "supervisor":
        parser.add_argument("-w", "--web-port", dest="supervisor.web_port", metavar="PORT",
                            type=_flag_type(config.check_port),
                            help="port of the web service in the supervisor (default: a free port, "
                            "printed at start) [supervisor.web_port]")
    needs = "required" if role in ("worker", "web") else "every supervisor, this one included, to run several"
    parser.add_argument("-s", "--supervisors", dest=f"{s}.supervisors", metavar="HOST:PORT[,...]",
                        type=_flag_type(config.check_addresses),
                        help=f"supervisor addresses separated by commas ({needs}) [{s}.supervisors]")
    parser.add_argument("--schedulers", dest=f"{s}.supervisors", type=_flag_type(config.check_addresses),
                        help=argparse.SUPPRESS)  # the pre-0.7 name
    parser.add_argument("-a", "--advertise-address", dest=f"{s}.advertise_address", metavar="ADDRESS",
                        type=_flag_type(config.check_host),
                        help="address the rest of the cluster reaches this node at, when it differs from -H "
                        f"(several interfaces, a VM, a container; default: -H, or the primary IP when -H is "
                        f"0.0.0.0) [{s}.advertise_address]")


def _add_worker_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("worker resources")
    group.add_argument("--n-cpu", dest="worker.n_cpu", metavar="N|auto", type=_flag_type(config.check_n_cpu),
                       help="CPU cores to keep busy, BLAS threads included (default auto: the cores "
                       "available to this process) [worker.n_cpu]")
    group.add_argument("--n-io-process", dest="worker.n_io_process", metavar="N",
                       type=_flag_type(config.check_non_negative_int),
                       help="processes serving this worker's chunks to others (default 1; 0: the main "
                       "process does) [worker.n_io_process]")
    group.add_argument("--cuda-devices", dest="worker.cuda_devices", metavar="I[,I...]",
                       type=_flag_type(config.check_cuda_devices),
                       help="CUDA devices to run GPU subtasks on, one GPU slot process each (CPU slots "
                       "then see no GPU); auto: every visible device (default: none) [worker.cuda_devices]")
    group.add_argument("--metrics-port", dest="worker.metrics_port", metavar="PORT",
                       type=_flag_type(config.check_optional_port),
                       help="serve this worker's GET /metrics (Prometheus text, the cluster's token or "
                       "--metrics-token) on PORT (default: none) [worker.metrics_port]")
    group.add_argument("--cache-mem", dest="worker.cache_mem", metavar="SIZE", type=_flag_type(config.check_mem),
                       help="memory for stored chunks, beyond which they spill: 4g, 512m or a share of "
                       "RAM like 50%% (default 40%%) [worker.cache_mem]")
    group.add_argument("--spill-dirs", dest="worker.spill_dirs", metavar="DIR[:DIR...]",
                       type=_flag_type(config.check_dirs),
                       help=f"directories chunks spill to, separated by {os.pathsep!r} [worker.spill_dirs]")
    group.add_argument("--phy-mem", dest="worker.phy_mem", metavar="SIZE", type=_flag_type(config.check_mem),
                       help="memory the worker may use in all, like 16g or 90%% (default 90%%) [worker.phy_mem]")
    # the flags of the pre-0.7 worker, still typed from old docs and scripts
    legacy = (
        ("--cpu-procs", "n_cpu", config.check_n_cpu),
        ("--net-procs", "n_io_process", config.check_non_negative_int),
        ("--cuda-device", "cuda_devices", config.check_cuda_devices),
        ("--spill-dir", "spill_dirs", config.check_dirs),
    )
    for old, dest, check in legacy:
        group.add_argument(old, dest=f"worker.{dest}", type=_flag_type(check), help=argparse.SUPPRESS)


def _add_common_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-f", "--config-file", dest="config_file", metavar="FILE",
                        help="YAML file overriding any default config key")
    parser.add_argument("--log-level", dest="logging.level", metavar="LEVEL", type=_flag_type(config.check_log_level),
                        help="debug, info, warning, error or critical (default warning) [logging.level]")
    parser.add_argument("--log-format", dest="logging.format", metavar="FORMAT",
                        help="a Python logging format [logging.format]")
    parser.add_argument("--log-conf", dest="logging.conf", metavar="FILE",
                        help="a logging config file: .ini/.conf (fileConfig) or .yml/.yaml/.json "
                        "(dictConfig); it replaces --log-format [logging.conf]")
    parser.add_argument("--use-uvloop", dest="oscar.use_uvloop", choices=("auto", "yes", "no"),
                        help="run on uvloop (default auto: when it is installed) [oscar.use_uvloop]")
    group = parser.add_argument_group("security (see docs/security.md)")
    group.add_argument("--token-file", dest="security.token_file", metavar="FILE",
                       type=_flag_type(config.check_optional_file),
                       help="read the cluster's token from FILE (default: $MARS_TOKEN, else a supervisor "
                       "makes one and nodes of its user on its host find it) [security.token_file]")
    group.add_argument("--token", dest="security.token", metavar="TOKEN",
                       help="the cluster's token; other users of this host can read a command line: prefer "
                       "--token-file or MARS_TOKEN [security.token]")
    group.add_argument("--metrics-token", dest="security.metrics_token", metavar="TOKEN",
                       help="a read-only token that opens GET /metrics on the web port and nothing else, for "
                       "a Prometheus scraper [security.metrics_token]")
    group.add_argument("--insecure", dest="security.insecure", action="store_const", const=True,
                       help="run without a token: any process, user or web page that reaches a port can "
                       "run code as this user [security.insecure]")
    for flag, key, what in (("--tls-cert", "tls_cert", "PEM certificate to serve the web port and actor TCP with"),
                            ("--tls-key", "tls_key", "its private key (unless in the certificate file)"),
                            ("--tls-ca", "tls_ca", "CA certificate that the cluster's certificates are checked "
                             "against")):
        group.add_argument(flag, dest=f"security.{key}", metavar="FILE", type=_flag_type(config.check_optional_file),
                           help=f"{what} [security.{key}]")


def parse_args(role: str, argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The configuration ``mars-<role> argv...`` runs with: defaults, then ``-f``, then flags.

    Parameters
    ----------
    role
        ``"supervisor"``, ``"worker"``, ``"scheduler"`` or ``"web"``.
    argv
        The arguments after the command name (``sys.argv[1:]`` when None).

    Returns
    -------
    dict
        The merged, checked config (the layout of ``config.yml``).

    Raises
    ------
    SystemExit
        With code 2 and one line on stderr for a bad flag or config value.

    Examples
    --------
    >>> cfg = parse_args("worker", ["-s", "10.0.0.1:7001", "--n-cpu", "4", "--cache-mem", "50%"])
    >>> cfg["worker"]["supervisors"], cfg["worker"]["n_cpu"], cfg["worker"]["cache_mem"]
    (['10.0.0.1:7001'], 4, '50%')
    """
    return _parse(role, argv)[0]


def _parse(role: str, argv: Sequence[str] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(config, the overrides the flags made)."""
    parser = build_parser(role)
    flat = vars(parser.parse_args(argv))
    path = flat.pop("config_file", None)
    overrides: dict[str, Any] = {}
    for dotted, value in flat.items():
        section, key = dotted.split(".")
        overrides.setdefault(section, {})[key] = value
    if role == "scheduler":
        overrides.setdefault("supervisor", {})["web"] = False
    section = SECTIONS[role]
    try:
        user = config.read_config_file(path) if path is not None else {}
        cfg = config.validate_config(config.deep_merge(config.deep_merge(config.default_config(), user), overrides))
    except config.ConfigError as e:
        parser.error(str(e))
    host_given = "host" in user.get(section, {}) or "host" in overrides.get(section, {})
    _resolve_addresses(cfg[section], host_given)
    problem = _role_problem(role, cfg)
    if problem:
        parser.error(problem)
    return cfg, overrides


def _role_problem(role: str, cfg: dict[str, Any]) -> str | None:
    """What the merged config lacks for this role, if anything."""
    node = cfg[SECTIONS[role]]
    if role in ("worker", "web") and not node["supervisors"]:
        return f"no supervisor given: pass -s HOST:PORT (or set {SECTIONS[role]}.supervisors in the -f file)"
    if role == "supervisor" and node["web"] and node["port"] and node["port"] == node["web_port"]:
        return f"-p and -w are both {node['port']}: the supervisor and its web service need different ports"
    return None


def _resolve_addresses(node: dict[str, Any], host_given: bool) -> None:
    """Fill in the host to bind and the address to advertise, each from the other when missing."""
    advertised = node["advertise_address"]
    if advertised and not host_given:
        # the legacy command lines give -a alone: bind where that address lives, or every interface
        # when it is not this machine's (the outside address of a NAT, VM or container)
        node["host"] = advertised if _can_bind(advertised) else "0.0.0.0"
    if not advertised and node["host"] in _ANY_HOST:
        node["advertise_address"] = primary_ip()


def primary_ip() -> str:
    """This machine's address on its default route (127.0.0.1 when it has none).

    Connecting a UDP socket only chooses a route; no packet is sent.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("8.8.8.8", 80))
            return s.getsockname()[0]
        except OSError:
            pass
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def _can_bind(host: str) -> bool:
    try:
        _probe(host, 0)
    except StartError:
        return False
    return True


def _probe(host: str, port: int) -> None:
    """Bind ``host:port`` and let go, raising :class:`StartError` with the line to show if it fails."""
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                          flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as e:
        raise StartError(f"cannot resolve host {host!r}: {e.strerror}") from None
    with socket.socket(family, kind, proto) as s:
        if os.name != "nt":  # as the server will, so a port left in TIME_WAIT counts as free
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise StartError(f"port {port} on {host} is already in use") from None
            raise StartError(f"cannot bind {host}:{port}: {e.strerror or e}") from None


def _ports(role: str, cfg: dict[str, Any]) -> list[tuple[str, int]]:
    """The (host, port) pairs the node will bind; port 0 means any free one."""
    node = cfg[SECTIONS[role]]
    pairs = [(node["host"], node["port"])]
    if SECTIONS[role] == "supervisor" and node["web"] and node["web_port"] is not None:
        pairs.append((node["host"], node["web_port"]))
    return pairs


def check_ports(role: str, cfg: dict[str, Any]) -> None:
    """Fail with :class:`StartError` before anything starts when a port is taken or the host is not ours."""
    for host, port in _ports(role, cfg):
        _probe(host, port)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or cur.__context__


def _in_use_line(exc: BaseException, ports: list[tuple[str, int]]) -> str | None:
    """The one line for a start that failed because a port was taken, else None."""
    for e in _causes(exc):
        # a sub pool's failure may come back as a RemoteError carrying only the text
        if (isinstance(e, OSError) and e.errno == errno.EADDRINUSE) or "address already in use" in str(e).lower():
            if m := re.search(r"\('([^']*)',\s*(\d+)", str(e)):  # asyncio: "... on address ('h', p): ..."
                return f"port {m.group(2)} on {m.group(1)} is already in use"
            fixed = [(h, p) for h, p in ports if p]
            if len(fixed) == 1:
                return f"port {fixed[0][1]} on {fixed[0][0]} is already in use"
            return f"a port is already in use: {e}"
    return None


def _web_url(address: str, token: str | None) -> str:
    url = address if "://" in address else f"http://{address}"
    if token and "token=" not in url:
        url += f"{'&' if '?' in url else '?'}token={token}"
    return url


def _announce(role: str, node: Any) -> None:
    """The lines a user (or a script) waits for: where the node is serving."""
    if role != "web":
        print(f"Mars {role} started at {node.address}", flush=True)
    web_address = getattr(node, "web_address", None)
    token = getattr(node, "token", None)
    if web_address:
        print(f"Mars Web started at {_web_url(web_address, token)}", flush=True)
    elif token and role != "worker":
        # no URL to carry it: workers and clients need it all the same
        print(f"Mars cluster token: {token} (this user's workers and clients on this host find it; elsewhere "
              "give it with --token-file or MARS_TOKEN)", flush=True)


async def _start_unless_stopped(starting: Awaitable[Any], stop: asyncio.Event) -> Any | None:
    """The started node, or None when a signal came first (the start is then cancelled)."""
    start_task = asyncio.ensure_future(starting)
    stop_task = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({start_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop_task.cancel()
    if start_task.done():
        return start_task.result()
    start_task.cancel()
    await asyncio.gather(start_task, return_exceptions=True)
    return None


async def serve(role: str, cfg: dict[str, Any], start: Callable[[dict], Awaitable[Any]]) -> int:
    """Start the node and serve until SIGINT/SIGTERM, then stop it; a second signal gives up waiting."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    main_task = asyncio.current_task()
    assert main_task is not None

    def on_signal() -> None:
        if stop.is_set():
            main_task.cancel()
        stop.set()

    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, on_signal)
    try:
        try:
            node = await _start_unless_stopped(start(cfg), stop)
        except Exception as e:
            logger.debug("mars-%s failed to start", role, exc_info=True)
            raise StartError(_in_use_line(e, _ports(role, cfg)) or f"failed to start: {type(e).__name__}: {e} "
                             "(--log-level debug shows the traceback)") from e
        if node is None:
            return 0
        _announce(role, node)
        await stop.wait()
        logger.info("mars-%s stopping", role)
        await node.stop()
        return 0
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def _starter(role: str) -> Callable[[dict], Awaitable[Any]]:
    # imported here, not at the top: the node code pulls in every service, which --help and a
    # flag error should not wait for; and tests put a fake node module in its place
    try:
        from . import node
    except ImportError as e:
        logger.debug("the node code failed to import", exc_info=True)
        raise StartError(f"cannot load the node code (mars.deploy.oscar.node): {type(e).__name__}: {e}") from e
    return node.start_worker if role == "worker" else node.start_web if role == "web" else node.start_supervisor


def main(role: str, argv: Sequence[str] | None = None) -> int:
    """Run ``mars-<role>`` with ``argv`` (``sys.argv[1:]`` when None); returns the exit code.

    Examples
    --------
    >>> main("worker", ["--help"])  # doctest: +SKIP
    """
    prog = f"mars-{role}"
    cfg, overrides = _parse(role, argv)
    try:
        configure_logging(cfg["logging"], level_given="level" in overrides.get("logging", {}))
        use_uvloop = resolve_uvloop(cfg["oscar"]["use_uvloop"])
    except (config.ConfigError, ImportError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    try:
        check_ports(role, cfg)
        return run(serve(role, cfg, _starter(role)), use_uvloop=use_uvloop)
    except StartError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    except asyncio.CancelledError:
        print(f"{prog}: stopped without waiting for the node to finish stopping", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # a Ctrl-C before the signal handlers were in place
        return 130
