"""``make run``: run the seeds' tensor example, then a pool with worker processes.

First the seeds' example in a local session: ``mt.inner`` of a 2000×2000
random tensor, checked against numpy. Until the cluster layer lands, the job
then shows the actor framework doing real work: a main pool and two ``cpu``
sub pool processes,
one summing actor per process, a 256 MiB array split into chunks that travel
to them as raw buffers, the partial sums checked against numpy, and the
call latencies of each transport.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import numpy as np

from .. import oscar as mo
from .. import session as mars_session
from .. import tensor as mt


class ChunkSummer(mo.Actor):
    """Sums the chunks it is sent; remembers how many bytes it has seen."""

    def __init__(self) -> None:
        self.nbytes = 0

    def sum_chunk(self, chunk: np.ndarray) -> float:
        self.nbytes += chunk.nbytes
        return float(chunk.sum())

    def ping(self) -> None:
        return None

    def seen(self) -> int:
        return self.nbytes


async def _latency(ref: mo.ActorRef, n: int = 2000) -> float:
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        await ref.ping()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


async def main(n_process: int = 2, mib: int = 256, keep: bool = False) -> None:
    started = time.perf_counter()
    labels = ["main"] + [f"cpu-{i}" for i in range(n_process)]
    async with await mo.create_actor_pool("127.0.0.1", n_process=n_process, labels=labels) as pool:
        print(f"pool {pool.address} with sub pools {[s.address for s in pool.sub_pools]} "
              f"started in {time.perf_counter() - started:.2f} s")
        refs = [
            await mo.create_actor(ChunkSummer, address=pool.address, allocate_strategy=mo.IdleLabel(label, "summer"))
            for label in labels[1:]
        ]
        data = np.random.default_rng(0).random(mib * 2**20 // 8)
        chunks = np.array_split(data, 8 * n_process)
        start = time.perf_counter()
        partial = await asyncio.gather(*(refs[i % len(refs)].sum_chunk(c) for i, c in enumerate(chunks)))
        elapsed = time.perf_counter() - start
        total, expected = sum(partial), float(data.sum())
        print(f"sum of {mib} MiB in {len(chunks)} chunks over {len(refs)} processes: {total:.6f} "
              f"(numpy: {expected:.6f}, {'equal' if np.isclose(total, expected) else 'DIFFERENT'}) "
              f"in {elapsed:.3f} s, {mib / 1024 / elapsed:.2f} GiB/s")
        local = await mo.create_actor(ChunkSummer, address=pool.address)
        print(f"median call round trip: in-process {await _latency(local):.1f} us, "
              f"unix socket {await _latency(refs[0]):.1f} us, "
              f"tcp {await _latency(mo.ActorRef('tcp://' + refs[0].address, refs[0].uid)):.1f} us")
        if keep:
            print(f"serving at {pool.address}; Ctrl-C to stop")
            await asyncio.Event().wait()


def tensor_job(n: int = 2000, chunk: int = 500) -> None:
    """The seeds' example: the inner product of a random matrix with itself, in chunks."""
    sess = mars_session.new_session()
    a = mt.random.rand(n, n, chunk_size=chunk)
    start = time.perf_counter()
    result = sess.run(mt.inner(a, a), show_progress=True)
    elapsed = time.perf_counter() - start
    values = sess.run(a)
    assert np.allclose(result, np.inner(values, values)), "mt.inner differs from numpy"
    print(f"mt.inner of a {n}x{n} random tensor in {chunk}x{chunk} chunks: {elapsed:.2f} s "
          f"(matches numpy); result[0, :3] = {np.round(result[0, :3], 4).tolist()}")
    sess.close()


def cli(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="pymars demo: an actor pool doing a chunked sum")
    parser.add_argument("--n-process", type=int, default=2, help="sub pool processes (default 2)")
    parser.add_argument("--mib", type=int, default=256, help="size of the array to sum, in MiB")
    parser.add_argument("--keep", action="store_true", help="keep the pool serving until Ctrl-C")
    args = parser.parse_args(argv)
    tensor_job()
    try:
        mo.run(main(args.n_process, args.mib, args.keep))
    except KeyboardInterrupt:
        print("stopped")


if __name__ == "__main__":
    cli()
