"""Tensors to and from zarr and HDF5, chunk by chunk: round trips across chunkings, and parallel writes on a cluster."""

from __future__ import annotations

import asyncio
import os
import time

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

zarr = pytest.importorskip("zarr")
h5py = pytest.importorskip("h5py")



@pytest.fixture(autouse=True, scope="module")
def _zarr_io_loop_closed():
    """zarr runs its I/O on an event loop of its own, closed at exit; close it when this module ends
    (the suite checks that no sockets are left open, and the loop holds its self-pipe)."""
    yield
    from zarr.core.sync import cleanup_resources

    cleanup_resources()


SHAPE = (7, 5)
DATA = np.arange(35, dtype=np.float64).reshape(SHAPE) * 1.5


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_zarr_round_trip_gets_the_tensors_chunks_regularized(tmp_path, chunk_size):
    path = tmp_path / "x.zarr"
    t = mt.tensor(DATA, chunk_size=chunk_size)
    writer = mt.to_zarr(t, path)
    assert not path.exists()  # lazy: nothing is written before execute()
    assert writer.execute().fetch().shape == (0, 0)
    array = zarr.open_array(str(path), mode="r")
    np.testing.assert_array_equal(array[:], DATA)
    assert tuple(array.chunks) == tuple(max(s) for s in t.execute().nsplits)
    back = mt.from_zarr(path)
    assert back.nsplits is None and back.shape == SHAPE and back.dtype == DATA.dtype
    assert_eq(back, DATA)
    assert back.nsplits[0][0] == array.chunks[0]
    assert_eq(mt.from_zarr(str(path), chunk_size=chunk_size), DATA)
    assert_eq(mt.from_zarr(array, chunk_size=(2, 3)) * 2, DATA * 2)


def test_zarr_writes_into_a_given_array_and_refuses_to_overwrite_unless_told(tmp_path):
    array = zarr.open_array(str(tmp_path / "y.zarr"), mode="w", shape=SHAPE, chunks=(3, 2), dtype="f8")
    mt.to_zarr(mt.tensor(DATA, chunk_size=((1, 5, 1), (2, 3))), array).execute()
    np.testing.assert_array_equal(array[:], DATA)
    with pytest.raises(ValueError, match=r"shape \(7, 5\) and dtype float64.*shape \(5,\)"):
        mt.to_zarr(mt.ones(5), array)
    with pytest.raises(FileExistsError):
        mt.to_zarr(mt.ones(SHAPE), tmp_path / "y.zarr").execute()
    mt.to_zarr(mt.ones(SHAPE, chunk_size=2), tmp_path / "y.zarr", overwrite=True, chunks=4).execute()
    array = zarr.open_array(str(tmp_path / "y.zarr"), mode="r")
    assert tuple(array.chunks) == (4, 4)
    np.testing.assert_array_equal(array[:], np.ones(SHAPE))


def test_mars_spellings_with_group_and_dataset_and_an_int_tensor(tmp_path):
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    mt.tozarr(str(tmp_path / "g.zarr"), mt.tensor(x, chunk_size=(1, 2, 3)), group="a", dataset="b").execute()
    assert_eq(mt.fromzarr(str(tmp_path / "g.zarr"), group="a", dataset="b", chunk_size=2), x)
    mt.tohdf5(str(tmp_path / "g.h5"), mt.tensor(x, chunk_size=1), group="a", dataset="b").execute()
    assert_eq(mt.fromhdf5(str(tmp_path / "g.h5"), group="a", dataset="b", chunk_size=(2, 1, 3)), x)


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_hdf5_round_trip(tmp_path, chunk_size):
    path = tmp_path / "x.h5"
    writer = mt.to_hdf5(path, mt.tensor(DATA, chunk_size=chunk_size), dataset="grp/data")
    assert not path.exists()
    writer.execute()
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["grp/data"][:], DATA)
    assert_eq(mt.from_hdf5(path, dataset="grp/data", chunk_size=chunk_size), DATA)
    assert_eq(mt.from_hdf5(str(path), dataset="/grp/data").sum(axis=0), DATA.sum(axis=0))


def test_hdf5_reuses_a_matching_dataset_and_names_bad_arguments(tmp_path):
    path = tmp_path / "y.h5"
    mt.to_hdf5(path, mt.zeros(SHAPE), dataset="d").execute()
    mt.to_hdf5(path, mt.tensor(DATA, chunk_size=3), dataset="d").execute()  # same shape and dtype: written into
    assert_eq(mt.from_hdf5(path, dataset="d", chunk_size=4), DATA)
    with pytest.raises(TypeError):
        mt.to_hdf5(path, mt.ones(3), dataset="d").execute()
    with pytest.raises(ValueError, match="dataset="):
        mt.to_hdf5(path, mt.ones(3))
    with pytest.raises(KeyError, match="'nope'"):
        mt.from_hdf5(path, dataset="nope")
    with pytest.raises(TypeError, match="path"):
        mt.to_hdf5(h5py.File(tmp_path / "z.h5", "w"), mt.ones(3), dataset="x")
    with pytest.raises(TypeError, match=r"\.todense\(\)"):
        mt.to_hdf5(path, mt.tensor(DATA, sparse=True), dataset="s")


def _recording_store(root: str, log: str):
    """A zarr store that logs (pid, start, end) of each chunk write and takes its time over it
    (made in a function so that it travels by value: the slots cannot import this module)."""
    from zarr.storage import LocalStore

    class RecordingStore(LocalStore):
        async def set(self, key, value):
            start = time.time()
            await asyncio.sleep(0.3)
            await super().set(key, value)
            if "zarr.json" not in key:
                with open(log, "a") as f:  # noqa: ASYNC230 - one short line, in a test
                    f.write(f"{os.getpid()} {start} {time.time()}\n")

    return RecordingStore(root)


def test_workers_of_a_cluster_write_their_chunks_in_parallel(tmp_path):
    from mars.deploy.local import new_cluster

    x = np.random.default_rng(0).random((400, 300))  # large enough not to run whole on one slot
    log = str(tmp_path / "writes.log")
    with new_cluster(n_worker=2, n_cpu=1, web=False) as cluster:
        t = mt.tensor(x, chunk_size=(100, 300)) + 1
        mt.to_zarr(t, _recording_store(str(tmp_path / "x.zarr"), log)).execute(session=cluster.session)
        mt.to_hdf5(tmp_path / "x.h5", t, dataset="x").execute(session=cluster.session)
        back = mt.from_zarr(str(tmp_path / "x.zarr"), chunk_size=(150, 100))
        np.testing.assert_array_equal(back.execute(session=cluster.session).fetch(session=cluster.session), x + 1)
        back = mt.from_hdf5(tmp_path / "x.h5", dataset="x", chunk_size=(150, 100))
        np.testing.assert_array_equal(back.execute(session=cluster.session).fetch(session=cluster.session), x + 1)
    with open(log) as f:
        writes = [line.split() for line in f.read().splitlines()]
    assert len(writes) == 4
    pids = {w[0] for w in writes}
    assert len(pids) == 2, f"every chunk was written by one process: {writes}"
    spans = [(w[0], float(w[1]), float(w[2])) for w in writes]
    overlapping = any(a[0] != b[0] and a[1] < b[2] and b[1] < a[2] for a in spans for b in spans)
    assert overlapping, f"the two workers' writes never overlapped in time: {spans}"
