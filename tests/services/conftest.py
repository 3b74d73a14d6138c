"""An in-process cluster for fast tests: a supervisor and two workers in this process.

The pools run on an event loop of their own (a thread), the workers' slots
run on threads of their main pools, and the client session talks to the
supervisor over the actor protocol, the same messages a cluster of
processes exchanges.
"""

from __future__ import annotations

import asyncio
import threading

import pytest


def cluster_config(n_cpu: int = 1, worker_timeout: float = 5.0, **task: float) -> dict:
    return {
        "cluster": {"heartbeat_interval": 0.2, "worker_timeout": worker_timeout},
        "task": {"no_worker_timeout": 10.0, **task},
        "supervisor": {"host": "127.0.0.1", "port": 0, "web_port": None, "web": False, "supervisors": []},
        "worker": {"host": "127.0.0.1", "port": 0, "supervisors": [], "n_cpu": n_cpu, "n_io_process": 0,
                   "slots_in_process": True, "phy_mem": "90%"},
        "oscar": {"use_uvloop": "no"},
    }


class InProcessCluster:
    def __init__(self, n_worker: int = 2, n_cpu: int = 1, worker_timeout: float = 5.0, **task: float):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="test-cluster")
        self.thread.start()
        self.config = cluster_config(n_cpu, worker_timeout, **task)
        self.supervisor = self.run(self._start_supervisor())
        self.workers = [self.start_worker() for _ in range(n_worker)]

    def run(self, coro, timeout: float = 30):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _start_supervisor(self):
        from mars.deploy.oscar.node import start_supervisor

        return await start_supervisor(self.config)

    def start_worker(self):
        from mars.deploy.oscar.node import start_worker

        self.config["worker"]["supervisors"] = [self.supervisor.address]
        worker = self.run(start_worker(self.config))
        self.run(self._wait_registered(worker.address))
        return worker

    async def _wait_registered(self, address: str) -> None:
        from mars.services.cluster.api import ClusterAPI

        api = ClusterAPI(self.supervisor.address)
        for _ in range(500):
            if any(w.info.address == address for w in await api.get_workers()):
                return
            await asyncio.sleep(0.01)
        raise TimeoutError(f"worker {address} did not register")

    def stop(self) -> None:
        from mars.oscar import close_connections

        for w in self.workers:
            self.run(w.stop())
        self.run(self.supervisor.stop())
        self.run(_call(close_connections))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


async def _call(fn):
    return fn()


@pytest.fixture(scope="module")
def cluster():
    c = InProcessCluster()
    yield c
    c.stop()


@pytest.fixture
def session(cluster):
    import mars

    sess = mars.new_session(cluster.supervisor.address, default=False)
    yield sess
    sess.close()
