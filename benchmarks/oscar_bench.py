"""Actor-call latency, throughput and bulk transfer: mars.oscar beside xoscar and raw sockets.

Run: ``.venv/bin/python benchmarks/oscar_bench.py [--quick] [--json PATH]``
(``pip install -e .[bench]`` installs xoscar; without it its column says n/a).

Figures, in one run:
- empty-call round trip (median, p99) in-process, across processes over a Unix
  socket, and over TCP loopback;
- calls per second with 100 concurrent callers into one actor of a sub pool;
- GiB/s moving a 256 MiB numpy array into a sub pool process (best of 3),
  beside a raw-socket copy of the same bytes into a fresh buffer of a child
  process, over TCP and over a Unix socket.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import time
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import mars.oscar as mo  # noqa: E402

Figures = dict[str, Any]


# -- the workload, written once for both frameworks ---------------------------

def make_actor(base: type) -> type:
    class Bench(base):  # type: ignore[misc, valid-type]
        def ping(self) -> None:
            return None

        def take(self, array: np.ndarray) -> int:
            return array.nbytes

    Bench.__name__ = Bench.__qualname__ = f"Bench_{base.__module__.split('.')[0]}"
    return Bench


MarsBench = make_actor(mo.Actor)
globals()[MarsBench.__name__] = MarsBench  # picklable by reference in sub pools


async def latency(call: Callable, n: int) -> tuple[float, float]:
    """Median and p99 of ``n`` sequential empty calls, in microseconds."""
    for _ in range(min(n, 500)):
        await call()
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        await call()
        samples.append(time.perf_counter_ns() - start)
    samples.sort()
    return statistics.median(samples) / 1e3, samples[int(len(samples) * 0.99)] / 1e3


async def throughput(call: Callable, callers: int, per_caller: int) -> float:
    async def caller() -> None:
        for _ in range(per_caller):
            await call()

    await asyncio.gather(*(caller() for _ in range(callers)))  # warm-up
    start = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(callers)))
    return callers * per_caller / (time.perf_counter() - start)


async def transfer(take: Callable, nbytes: int, rounds: int = 3) -> float:
    """Best one-way GiB/s for an array of ``nbytes`` into another process."""
    array = np.random.default_rng(0).random(nbytes // 8)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        assert await take(array) == array.nbytes
        best = min(best, time.perf_counter() - start)
    return nbytes / best / 2**30


async def measure(local: Any, remote: Any, tcp: Any, args: argparse.Namespace) -> Figures:
    figures: Figures = {}
    figures["in-process"] = await latency(local.ping, args.calls)
    figures["unix"] = await latency(remote.ping, args.calls)
    figures["tcp"] = await latency(tcp.ping, args.calls) if tcp is not None else None
    figures["calls/s"] = await throughput(remote.ping, 100, args.per_caller)
    figures["GiB/s"] = await transfer(remote.take, args.mib * 2**20)
    return figures


# -- mars.oscar -------------------------------------------------------------------

async def bench_mars(args: argparse.Namespace) -> Figures:
    async with await mo.create_actor_pool("127.0.0.1", n_process=1) as pool:
        local = await mo.create_actor(MarsBench, address=pool.address)
        remote = await mo.create_actor(MarsBench, address=pool.address, allocate_strategy=mo.RandomSubPool())
        tcp = mo.ActorRef("tcp://" + remote.address, remote.uid)
        return await measure(local, remote, tcp, args)


# -- xoscar -------------------------------------------------------------------------

def bench_xoscar(args: argparse.Namespace) -> Figures | None:
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
            strategy = xo.allocate_strategy.RandomSubPool()
            remote = await xo.create_actor(actor, address=pool.external_address, uid="remote",
                                           allocate_strategy=strategy)
            # xoscar picks its own transport between processes of a host; it has no forced-TCP mode
            return await measure(local, remote, None, args)
        finally:
            await pool.stop()

    return asyncio.run(run())


# -- raw sockets ----------------------------------------------------------------------

def _raw_receiver(family: int, address: Any, nbytes: int, rounds: int) -> None:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.connect(address)
    for _ in range(rounds):
        view = memoryview(np.empty(nbytes, dtype=np.uint8))
        got = 0
        while got < nbytes:
            got += sock.recv_into(view[got:])
        sock.sendall(b"k")
    sock.close()


def raw_copy(family: int, nbytes: int, rounds: int = 3) -> float:
    """Best GiB/s of a plain sendall into a child's fresh buffer, acknowledged."""
    server = socket.socket(family, socket.SOCK_STREAM)
    address: Any = ("127.0.0.1", 0) if family == socket.AF_INET else f"\0mars-bench-{os.getpid()}"
    server.bind(address)
    server.listen(1)
    child = multiprocessing.get_context("spawn").Process(
        target=_raw_receiver, args=(family, server.getsockname(), nbytes, rounds)
    )
    child.start()
    conn, _ = server.accept()
    if family == socket.AF_INET:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    data = memoryview(np.random.default_rng(1).random(nbytes // 8)).cast("B")
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        conn.sendall(data)
        conn.recv(1)
        best = min(best, time.perf_counter() - start)
    conn.close()
    server.close()
    child.join(10)
    return nbytes / best / 2**30


def _echo(sock: socket.socket) -> None:
    while data := sock.recv(256):
        sock.sendall(data)


def raw_ping_pong(n: int) -> float:
    """Median round trip of 40 bytes between two processes, blocking Unix socket: the floor."""
    here, there = socket.socketpair()
    child = multiprocessing.get_context("spawn").Process(target=_echo, args=(there,))
    child.start()
    there.close()
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        here.sendall(b"x" * 40)
        here.recv(256)
        samples.append(time.perf_counter_ns() - start)
    here.close()
    child.join(10)
    return statistics.median(samples[n // 10 :]) / 1e3


# -- report -----------------------------------------------------------------------------

def _lat(value: Any) -> str:
    return "n/a" if value is None else f"{value[0]:8.1f} / {value[1]:8.1f}"


def report(mars: Figures, xoscar: Figures | None, raw: dict[str, float], args: argparse.Namespace) -> bool:
    x = xoscar or {}
    print(f"\n{'figure':44} {'mars.oscar':>22} {'xoscar':>22}")
    for key, label in (("in-process", "round trip in-process, median/p99 us"),
                       ("unix", "round trip cross-process (unix), us"),
                       ("tcp", "round trip cross-process (tcp), us")):
        print(f"{label:44} {_lat(mars[key]):>22} {_lat(x.get(key)):>22}")
    xc = f"{x['calls/s']:,.0f}" if x else "n/a"
    print(f"{'calls/s, 100 concurrent callers':44} {mars['calls/s']:>22,.0f} {xc:>22}")
    xg = f"{x['GiB/s']:.2f}" if x else "n/a"
    print(f"{f'{args.mib} MiB array into a sub pool, GiB/s':44} {mars['GiB/s']:>22.2f} {xg:>22}")
    print(f"{'raw socket copy, same bytes, GiB/s':44} tcp {raw['tcp']:.2f}, unix {raw['unix']:.2f}")
    print(f"{'raw blocking ping-pong (the floor), us':44} {raw['ping-pong']:.1f}")
    checks = [
        ("cross-process round trip median < 100 us", mars["unix"][0] < 100),
        ("> 20,000 calls/s with 100 callers", mars["calls/s"] > 20_000),
        ("transfer >= 0.5 x raw unix-socket rate", mars["GiB/s"] >= 0.5 * raw["unix"]),
    ]
    if xoscar:
        checks.append(("ahead of xoscar on every figure", all(
            mars[k][0] < x[k][0] for k in ("in-process", "unix")
        ) and mars["calls/s"] > x["calls/s"] and mars["GiB/s"] > x["GiB/s"]))
    print("\ntargets:")
    for text, ok in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {text}")
    return all(ok for _, ok in checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts, for a smoke run")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--no-peers", action="store_true", help="skip xoscar even when it is installed")
    args = parser.parse_args()
    args.calls, args.per_caller, args.mib = (500, 20, 64) if args.quick else (5000, 100, 256)
    mars = mo.run(bench_mars(args))
    xoscar = None if args.no_peers else bench_xoscar(args)
    raw = {
        "tcp": raw_copy(socket.AF_INET, args.mib * 2**20),
        "unix": raw_copy(socket.AF_UNIX, args.mib * 2**20),
        "ping-pong": raw_ping_pong(args.calls),
    }
    ok = report(mars, xoscar, raw, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"mars": mars, "xoscar": xoscar, "raw": raw, "targets_met": ok}, f, indent=2)


if __name__ == "__main__":
    main()
