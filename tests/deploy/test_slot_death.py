"""A slot process that dies, or a chunk function that tries to end it, on a real cluster.

A ``mars-supervisor`` and one ``mars-worker --n-cpu 1``: one slot, so a job
after a death runs only once the worker has started the slot again. A death
fails its job with an error that names the slot, the worker, how the process
ended and the operator it ran; ``sys.exit`` and ``KeyboardInterrupt`` in a
chunk function fail the job without ending the slot. Processes that chunk
functions start go with their slot, or with their worker.
"""

from __future__ import annotations

import ctypes
import os
import re
import signal
import subprocess
import sys
import time

import pandas as pd
import psutil
import pytest
from process_nodes import one_worker_cluster, start_supervisor, start_worker

import mars
import mars.dataframe as md
import mars.tensor as mt

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def cluster():
    with one_worker_cluster("--n-cpu", "1", "--n-io-process", "0") as (url, worker):
        yield url, worker


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"x": range(4)})


def _job(func):
    """A one-partition job running ``func`` on its partition (``MapPartitions`` is map_partitions' operator)."""
    return md.DataFrame(_frame(), chunk_size=4).map_partitions(func, meta=_frame().iloc[:0])


def _slot_pid(sess) -> int:
    """The process id of the worker's only slot, as a chunk function sees it."""
    out = sess.run(md.DataFrame(_frame(), chunk_size=4).map_partitions(lambda p: p.assign(x=os.getpid())))
    return int(out["x"].iloc[0])


def _chunk_func(kind: str):
    """A chunk function that ends its process, or tries to, as ``kind`` says (made here, in a function,
    so that it travels by value: the slots cannot import this test module)."""

    def func(part):
        if kind == "segfault":
            ctypes.string_at(0)
        elif kind == "os._exit":
            os._exit(3)
        elif kind == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(30)
        elif kind == "sys.exit":
            sys.exit(3)
        elif kind == "KeyboardInterrupt":
            raise KeyboardInterrupt("stop")
        return part

    return func


@pytest.mark.parametrize("kind, how", [("segfault", "SIGSEGV"), ("os._exit", "exit code 3"), ("sigkill", "SIGKILL")])
def test_a_slot_that_dies_fails_the_job_naming_slot_worker_op_and_how(cluster, kind, how):
    url, worker = cluster
    with mars.new_session(url, default=False) as sess:
        before = _slot_pid(sess)
        with pytest.raises(Exception) as info:
            sess.run(_job(_chunk_func(kind)))
        message = str(info.value)
        assert type(info.value).__name__ == "SlotDied", message
        # the partition and its map run as one subtask (the map reads only the partition), or one chain: the
        # worker names the ops of the subtask or batch it ran
        said = f"slot 0 of worker {re.escape(worker.address)} died with {re.escape(how)} while running "
        assert re.search(said + r"(MapPartitions|[\w >-]*-> MapPartitions|one of [\w, ]*MapPartitions) \(", message), \
            message
        assert f"pid {before}" in message
        assert sess.run(mt.arange(10, chunk_size=3).sum()) == 45  # the cluster goes on
        assert _slot_pid(sess) != before  # on a slot started again


@pytest.mark.parametrize("kind, said", [("sys.exit", "MapPartitions called sys.exit(3)"),
                                        ("KeyboardInterrupt", "MapPartitions raised KeyboardInterrupt: stop")])
def test_sys_exit_or_an_interrupt_in_a_chunk_function_fails_the_job_and_the_slot_stays(cluster, kind, said):
    url, _ = cluster
    with mars.new_session(url, default=False) as sess:
        before = _slot_pid(sess)
        with pytest.raises(Exception) as info:
            sess.run(_job(_chunk_func(kind)))
        assert type(info.value).__name__ == "ChunkFunctionExit", str(info.value)
        # the op's name, or the fused subtask's steps ending with it (the partition, then the map)
        assert re.search(r"the chunk function of ([\w >-]*-> )?" + re.escape(said), str(info.value)), str(info.value)
        assert sess.run(mt.arange(10, chunk_size=3).sum()) == 45
        assert _slot_pid(sess) == before  # the same process: it neither died nor hung


def _gone(pid: int, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True  # killed; reaping it is up to whoever adopted it
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def _start_child_then(pid_file: str, then_exit: bool):
    def func(part):
        child = subprocess.Popen(["sleep", "300"])
        with open(pid_file, "w") as f:
            f.write(str(child.pid))
        if then_exit:
            os._exit(3)
        return part

    return func


def _read_pid(path: str) -> int:
    with open(path) as f:
        return int(f.read())


def test_a_process_started_by_a_chunk_function_dies_with_its_slot(cluster, tmp_path):
    url, _ = cluster
    pid_file = str(tmp_path / "child")
    with mars.new_session(url, default=False) as sess:
        with pytest.raises(Exception, match="died with exit code 3"):
            sess.run(_job(_start_child_then(pid_file, then_exit=True)))
        child = _read_pid(pid_file)
        try:
            assert _gone(child), "the process the chunk function started outlived its slot"
        finally:
            if not _gone(child, 0):
                os.kill(child, signal.SIGKILL)
        assert sess.run(mt.arange(10, chunk_size=3).sum()) == 45


def test_a_process_started_by_a_chunk_function_dies_with_its_worker(tmp_path):
    sup, address, url = start_supervisor()
    worker = start_worker(address, "--n-cpu", "1", "--n-io-process", "0")
    pid_file = str(tmp_path / "child")
    child = None
    try:
        with mars.new_session(url, default=False) as sess:
            sess.run(_job(_start_child_then(pid_file, then_exit=False)))
        child = _read_pid(pid_file)
        assert not _gone(child, 0), "the chunk function's process should run until its worker stops"
        # SIGTERM alone: Node.stop would kill the worker's whole process tree itself
        worker.process.send_signal(signal.SIGTERM)
        worker.process.wait(30)
        assert _gone(child), "the process a chunk function started outlived its worker"
    finally:
        worker.stop()
        sup.stop()
        if child is not None and not _gone(child, 0):
            os.kill(child, signal.SIGKILL)
