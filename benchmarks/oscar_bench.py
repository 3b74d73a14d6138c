"""Actor-call latency, throughput and bulk transfer: mars.oscar beside xoscar and raw sockets.

Run: ``.venv/bin/python benchmarks/oscar_bench.py [--quick] [--json PATH] [--no-peers]``.
Prints, in one run, for mars.oscar and (when installed) xoscar: empty-call
round trips (median, p99) in-process, across processes over a Unix socket and
over TCP loopback; calls/s with 100 concurrent callers; GiB/s moving a 256 MiB
array into a sub pool process. Beside them: raw-socket copies of the same
bytes and raw ping-pongs (blocking, and between uvloop processes), then
PASS/FAIL against the targets. Every process it starts, it stops, and checks.
See README.md for the methods.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import socket
import statistics
import sys
import time
from typing import Any, Awaitable, Callable, Iterator

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # every engine and child gets the same cores

import numpy as np  # noqa: E402
import psutil  # noqa: E402

import mars.oscar as mo  # noqa: E402

Figures = dict[str, Any]
Call = Callable[..., Awaitable[Any]]
CALLERS = 100


# -- the workload, written once for both frameworks ---------------------------

def make_actor(base: type) -> type:
    """An actor class with an empty method and one that takes an array, on ``base``."""

    class Bench(base):  # type: ignore[misc, valid-type]
        def ping(self) -> None:
            return None

        def take(self, array: np.ndarray) -> int:
            return array.nbytes

    Bench.__name__ = Bench.__qualname__ = f"Bench_{base.__module__.split('.')[0]}"
    return Bench


MarsBench = make_actor(mo.Actor)
globals()[MarsBench.__name__] = MarsBench  # picklable by reference in sub pools


async def latency(call: Call, n: int) -> list[float]:
    """Median and p99 of ``n`` sequential empty calls after a warm-up, in microseconds."""
    for _ in range(min(n, 500)):
        await call()
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        await call()
        samples.append(time.perf_counter_ns() - start)
    samples.sort()
    return [statistics.median(samples) / 1e3, samples[int(len(samples) * 0.99)] / 1e3]


async def throughput(call: Call, seconds: float) -> float:
    """Calls per second completed by ``CALLERS`` tasks calling in a loop for ``seconds``."""
    done = [0]

    async def caller(deadline: float) -> None:
        while time.perf_counter() < deadline:
            await call()
            done[0] += 1

    await asyncio.gather(*(caller(time.perf_counter() + 0.2) for _ in range(CALLERS)))  # warm-up
    done[0] = 0
    start = time.perf_counter()
    await asyncio.gather(*(caller(start + seconds) for _ in range(CALLERS)))
    return done[0] / (time.perf_counter() - start)


async def transfer(take: Call, nbytes: int, rounds: int = 3) -> float:
    """Best one-way GiB/s for an array of ``nbytes`` into another process."""
    array = np.random.default_rng(0).random(nbytes // 8)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        got = await take(array)
        best = min(best, time.perf_counter() - start)
        if got != array.nbytes:
            raise RuntimeError(f"the actor received {got} bytes, {array.nbytes} were sent")
    return nbytes / best / 2**30


async def measure(local: Any, remote: Any, args: argparse.Namespace) -> Figures:
    """The figures over a framework's default paths (in-process and between local processes)."""
    return {
        "in-process": await latency(local.ping, args.calls),
        "unix": await latency(remote.ping, args.calls),
        "calls/s": await throughput(remote.ping, args.seconds),
        "GiB/s": await transfer(remote.take, args.mib * 2**20),
    }


async def measure_tcp(remote: Any, args: argparse.Namespace) -> Figures:
    """The figures over TCP loopback, for a reference that is routed over TCP."""
    return {
        "tcp": await latency(remote.ping, args.calls),
        "GiB/s tcp": await transfer(remote.take, args.mib * 2**20),
    }


# -- mars.oscar -------------------------------------------------------------------

async def bench_mars(args: argparse.Namespace) -> Figures:
    # with a token, as every cluster has one: connections authenticate once, calls then run as without
    async with await mo.create_actor_pool("127.0.0.1", n_process=1, token=args.token) as pool:
        local = await mo.create_actor(MarsBench, address=pool.address)
        remote = await mo.create_actor(MarsBench, address=pool.address, allocate_strategy=mo.RandomSubPool())
        figures = await measure(local, remote, args)
        figures.update(await measure_tcp(mo.ActorRef("tcp://" + remote.address, remote.uid), args))
        mo.close_connections()
        return figures


# -- xoscar -------------------------------------------------------------------------

@contextlib.contextmanager
def xoscar_over_tcp(address: str) -> Iterator[bool]:
    """Route this process's calls to ``address`` over TCP; yields False when it cannot.

    xoscar has no public forced-TCP mode: its router maps a local sub pool's
    address to a Unix socket, so the mapping is lifted for the duration (a
    private attribute; if it moves, the TCP figures say n/a).
    """
    from xoscar.backends.router import Router

    router = Router.get_instance()
    mapping = getattr(router, "_mapping", None)
    if not isinstance(mapping, dict) or address not in mapping:
        yield False
        return
    internal = mapping.pop(address)
    try:
        yield True
    finally:
        mapping[address] = internal


def bench_xoscar(args: argparse.Namespace) -> Figures | None:
    """xoscar's figures, on a uvloop loop of its own (as mars.oscar's), or None if absent."""
    try:
        import xoscar as xo
    except ImportError:
        return None
    actor = make_actor(xo.Actor)
    globals()[actor.__name__] = actor

    async def run() -> Figures:
        pool = await xo.create_actor_pool("127.0.0.1", n_process=1)
        try:
            local = await xo.create_actor(actor, address=pool.external_address, uid="local")
            remote = await xo.create_actor(actor, address=pool.external_address, uid="remote",
                                           allocate_strategy=xo.allocate_strategy.RandomSubPool())
            figures = await measure(local, remote, args)
            figures.update({"tcp": None, "GiB/s tcp": None})
            with xoscar_over_tcp(remote.address) as routed:
                if routed:
                    figures.update(await measure_tcp(remote, args))
            return figures
        finally:
            await pool.stop()

    try:
        return mo.run(run())  # a fresh uvloop loop, closed afterwards, as asyncio.run's
    except Exception as e:  # a peer's failure must not hide mars.oscar's figures
        print(f"xoscar {xo.__version__} failed, its column says n/a: {type(e).__name__}: {e}", file=sys.stderr)
        return None


# -- raw sockets ----------------------------------------------------------------------

def _reap(child: multiprocessing.process.BaseProcess) -> None:
    child.join(10)
    if child.is_alive():
        child.kill()
        child.join(5)


def _raw_receiver(family: int, address: Any, nbytes: int, rounds: int) -> None:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.connect(address)
    for _ in range(rounds):
        view = np.empty(nbytes, dtype=np.uint8).data  # fresh, like a message's buffer
        got = 0
        while got < nbytes:
            got += sock.recv_into(view[got:])
        sock.sendall(b"k")
    sock.close()


def raw_copy(family: int, nbytes: int, rounds: int = 3) -> float:
    """Best GiB/s of a plain sendall into a child's fresh buffer, acknowledged with one byte."""
    server = socket.socket(family, socket.SOCK_STREAM)
    address: Any = ("127.0.0.1", 0) if family == socket.AF_INET else f"\0mars-bench-{os.getpid()}"
    server.bind(address)
    server.listen(1)
    child = multiprocessing.get_context("spawn").Process(
        target=_raw_receiver, args=(family, server.getsockname(), nbytes, rounds)
    )
    child.start()
    try:
        conn, _ = server.accept()
        if family == socket.AF_INET:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        data = np.random.default_rng(1).random(nbytes // 8).data.cast("B")
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            conn.sendall(data)
            conn.recv(1)
            best = min(best, time.perf_counter() - start)
        conn.close()
    finally:
        server.close()
        _reap(child)
    return nbytes / best / 2**30


def raw_copies(mib: int) -> dict[str, float]:
    """Raw copy rates over TCP and Unix (main() keeps the better of a run before and one after)."""
    return {"tcp": raw_copy(socket.AF_INET, mib * 2**20), "unix": raw_copy(socket.AF_UNIX, mib * 2**20)}


def _spawn_peer(target: Callable[[socket.socket], None]) -> tuple[socket.socket, Any]:
    """A child process running ``target`` on one end of a Unix socket pair; returns the other end."""
    here, there = socket.socketpair()
    child = multiprocessing.get_context("spawn").Process(target=target, args=(there,))
    child.start()
    there.close()
    return here, child


def _echo(sock: socket.socket) -> None:
    while data := sock.recv(256):
        sock.sendall(data)


def raw_ping_pong(n: int) -> float:
    """Median round trip of 40 bytes between two processes, blocking Unix socket: the floor."""
    here, child = _spawn_peer(_echo)
    samples = []
    try:
        for _ in range(n):
            start = time.perf_counter_ns()
            here.sendall(b"x" * 40)
            here.recv(256)
            samples.append(time.perf_counter_ns() - start)
    finally:
        here.close()
        _reap(child)
    return statistics.median(samples[n // 10 :]) / 1e3


class _Peer(asyncio.Protocol):
    """The child's end echoes; the parent's resolves ``waiter`` on each reply (40 bytes arrive whole)."""

    def __init__(self, echo: bool = False) -> None:
        self.echo, self.waiter = echo, asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: Any = transport

    def data_received(self, data: bytes) -> None:
        if self.echo:
            self.transport.write(data)
        elif not self.waiter.done():
            self.waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.waiter.done():
            self.waiter.set_result(None)


def _loop_echo(sock: socket.socket) -> None:
    async def serve() -> None:
        _, peer = await asyncio.get_running_loop().connect_accepted_socket(lambda: _Peer(echo=True), sock)
        await peer.waiter  # until the parent closes

    mo.run(serve())


async def loop_ping_pong(n: int) -> float:
    """Median round trip of 40 bytes between two uvloop processes, timed as the actor calls are."""
    here, child = _spawn_peer(_loop_echo)
    loop = asyncio.get_running_loop()
    transport, peer = await loop.connect_accepted_socket(_Peer, here)

    async def ping() -> None:
        peer.waiter = loop.create_future()
        transport.write(b"x" * 40)
        await peer.waiter

    try:
        return (await latency(ping, n))[0]
    finally:
        transport.close()  # takes effect on the loop: join off it
        await loop.run_in_executor(None, _reap, child)


def left_behind() -> list[str]:
    """Child processes still alive (multiprocessing's resource tracker, which exits with us, aside)."""
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)
    time.sleep(0.5)  # let stopped pools finish exiting
    return [f"{p.pid} {' '.join(p.cmdline())[:80]}" for p in psutil.Process().children(recursive=True)
            if p.pid != tracker and p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


# -- report -----------------------------------------------------------------------------

def _lat(value: list[float] | None) -> str:
    return "n/a" if value is None else f"{value[0]:8.1f} / {value[1]:8.1f}"


def _num(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else format(value, fmt)


def print_table(mars: Figures, x: Figures, raw: dict[str, float], mib: int) -> None:
    print(f"\n{'figure':46} {'mars.oscar':>20} {'xoscar':>20}")
    for key, label in (("in-process", "round trip in-process, median / p99 us"),
                       ("unix", "round trip cross-process (unix), us"),
                       ("tcp", "round trip cross-process (tcp), us")):
        print(f"{label:46} {_lat(mars[key]):>20} {_lat(x.get(key)):>20}")
    print(f"{f'calls/s, {CALLERS} concurrent callers':46} {mars['calls/s']:>20,.0f} "
          f"{_num(x.get('calls/s'), ',.0f'):>20}")
    for key, path in (("GiB/s", "unix"), ("GiB/s tcp", "tcp")):
        label = f"{mib} MiB array into a sub pool ({path}), GiB/s"
        print(f"{label:46} {mars[key]:>20.2f} {_num(x.get(key), '.2f'):>20}")
    for key, path in (("GiB/s", "unix"), ("GiB/s tcp", "tcp")):
        ratios = f"mars/raw {mars[key] / raw[path]:.2f}"
        if x.get(key) is not None:
            ratios += f", xoscar/raw {x[key] / raw[path]:.2f}"
        print(f"{f'raw {path} socket copy, same bytes, GiB/s':46} {raw[path]:>20.2f}   ({ratios})")
    print(f"{'raw blocking ping-pong (the floor), us':46} {raw['ping-pong']:>20.1f}")
    print(f"{'raw uvloop ping-pong (the event-loop floor), us':46} {raw['loop ping-pong']:>20.1f}")


def behind_xoscar(mars: Figures, x: Figures) -> list[str]:
    """The figures (medians, p99s, rates) where mars.oscar is not ahead of xoscar."""
    lost = []
    for key in ("in-process", "unix", "tcp"):
        if mars[key] is not None and x.get(key) is not None:
            lost += [f"{key} {q}" for q, m, o in zip(("median", "p99"), mars[key], x[key]) if m >= o]
    for key in ("calls/s", "GiB/s", "GiB/s tcp"):
        if x.get(key) is not None and mars[key] <= x[key]:
            lost.append(key)
    return lost


def check_targets(mars: Figures, xoscar: Figures | None, raw: dict[str, float]) -> dict[str, tuple[str, bool]]:
    """Target name -> (what was measured, met)."""
    unix = mars["GiB/s"] / raw["unix"]
    checks = {
        "round trip < 100 us": (f"cross-process round trip median < 100 us (unix: {mars['unix'][0]:.1f})",
                                mars["unix"][0] < 100),
        "calls/s > 20000": (f"> 20,000 calls/s with {CALLERS} callers ({mars['calls/s']:,.0f})",
                            mars["calls/s"] > 20_000),
        "transfer >= 0.5 raw": (f"array transfer >= 0.5 x raw unix-socket rate ({unix:.2f} x)",
                                unix >= 0.5),
    }
    if xoscar is not None:
        lost = behind_xoscar(mars, xoscar)
        behind = f" (behind on: {', '.join(lost)})" if lost else ""
        checks["ahead of xoscar"] = (f"ahead of xoscar on every figure{behind}", not lost)
    return checks


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts, for a smoke run")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--no-peers", action="store_true", help="skip xoscar even when it is installed")
    parser.add_argument("--no-token", dest="token", action="store_const", const=None,
                        default="oscar-bench-token", help="pools without a token (as before every cluster had one)")
    args = parser.parse_args()
    args.calls, args.seconds, args.mib = (500, 0.5, 64) if args.quick else (5000, 2.0, 256)
    start = time.perf_counter()
    copies = raw_copies(args.mib)
    mars = mo.run(bench_mars(args))
    xoscar = None if args.no_peers else bench_xoscar(args)
    raw = {
        **{path: max(rate, copies[path]) for path, rate in raw_copies(args.mib).items()},
        "ping-pong": raw_ping_pong(args.calls),
        "loop ping-pong": mo.run(loop_ping_pong(args.calls)),
    }
    print_table(mars, xoscar or {}, raw, args.mib)
    checks = check_targets(mars, xoscar, raw)
    print("\ntargets:")
    for text, ok in checks.values():
        print(f"  {'PASS' if ok else 'FAIL'}  {text}")
    left = left_behind()
    print(f"\nprocesses left behind: {', '.join(left) if left else 'none'}; "
          f"run took {time.perf_counter() - start:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"mars": mars, "xoscar": xoscar, "raw": raw, "MiB": args.mib, "calls": args.calls,
                       "targets": {name: ok for name, (_, ok) in checks.items()},
                       "targets_met": all(ok for _, ok in checks.values()), "left_behind": left}, f, indent=2)
    if left:
        sys.exit(f"{len(left)} process(es) left behind")


if __name__ == "__main__":
    main()
