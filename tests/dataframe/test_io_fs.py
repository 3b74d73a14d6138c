"""Readers and lazy writers on fsspec URLs: an in-memory filesystem, and a local HTTP server."""

from __future__ import annotations

import http.server
import io
import os
import threading

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from tests.dataframe.df_testing import assert_eq, partitionings

fsspec = pytest.importorskip("fsspec")


def _frame(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"k": rng.integers(0, 5, n), "x": rng.random(n).round(4),
                         "s": rng.choice(["a", "bb", "ccc"], n)})


@pytest.fixture
def mem():
    """A fresh directory on fsspec's in-memory filesystem (one per test), and the filesystem."""
    fs = fsspec.filesystem("memory")
    root = f"/t{os.urandom(4).hex()}"
    fs.mkdir(root)
    yield f"memory://{root}", fs
    fs.rm(root, recursive=True)


def _put(fs, url: str, data: bytes) -> None:
    fs.pipe(url[len("memory://"):], data)


@pytest.mark.parametrize("chunk_bytes", [1, 200, None])
def test_read_csv_from_memory_urls_and_globs(mem, chunk_bytes):
    root, fs = mem
    frames = [_frame(40, 1), _frame(25, 2), _frame(3, 3)]
    for i, f in enumerate(frames):
        _put(fs, f"{root}/data-{i + 9}.csv", f.to_csv(index=False).encode())
    expected = pd.concat(frames, ignore_index=True)  # natural order: data-9, data-10, data-11
    df = md.read_csv(f"{root}/data-*.csv", chunk_bytes=chunk_bytes)
    assert_eq(df, expected)
    if chunk_bytes == 1:
        assert len(df.chunks) > 3
    one = md.read_csv(f"{root}/data-10.csv", chunk_bytes=chunk_bytes, index_col="s", usecols=["s", "x"])
    assert_eq(one, frames[1][["s", "x"]].set_index("s"))


def test_read_csv_compressed_url_and_missing(mem):
    root, fs = mem
    buf = io.BytesIO()
    _frame().to_csv(buf, index=False, compression="gzip")
    _put(fs, f"{root}/z.csv.gz", buf.getvalue())
    assert_eq(md.read_csv(f"{root}/z.csv.gz", chunk_bytes=10), _frame())
    with pytest.raises(FileNotFoundError, match="nope"):
        md.read_csv(f"{root}/nope.csv")
    with pytest.raises(FileNotFoundError, match="no files match"):
        md.read_csv(f"{root}/nope-*.csv")


@pytest.mark.parametrize("chunk_size", partitionings(23))
def test_to_csv_on_memory_urls(mem, chunk_size):
    root, fs = mem
    pdf = _frame(23)
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    written = df.to_csv(f"{root}/one.csv", index=False)
    assert not fs.exists(f"{root[9:]}/one.csv")  # lazy
    written.execute()
    assert fs.cat(f"{root[9:]}/one.csv") == pdf.to_csv(index=False).encode()
    assert sorted(fs.ls(root[9:], detail=False)) == [f"{root[9:]}/one.csv"]  # the part files are gone
    df.to_csv(f"{root}/p-*.csv", index=False).execute()
    n = len(df.execute().chunks)
    assert len(fs.glob(f"{root[9:]}/p-*.csv")) == n
    assert_eq(md.read_csv(f"{root}/p-*.csv"), pdf)


def test_parquet_round_trip_on_memory_urls(mem):
    root, fs = mem
    pdf = _frame(50)
    md.DataFrame(pdf, chunk_size=(10, 0, 40)).to_parquet(f"{root}/d/").execute()
    assert_eq(md.read_parquet(f"{root}/d", chunk_bytes=1), pdf)
    md.DataFrame(pdf, chunk_size=7).to_parquet(f"{root}/f.parquet").execute()
    with fs.open(f"{root[9:]}/f.parquet", "rb") as f:
        pdt.assert_frame_equal(pd.read_parquet(f), pdf)
    assert_eq(md.read_parquet(f"{root}/f.parquet", columns=["x"]), pdf[["x"]])
    md.DataFrame(pdf, chunk_size=20).to_parquet(f"{root}/h", partition_cols=["k"]).execute()
    expected = pd.read_parquet(f"{root}/h")
    assert_eq(md.read_parquet(f"{root}/h"), expected)
    assert_eq(md.read_parquet(f"{root}/h", filters=[("k", "in", [1, 3])]),
              pd.read_parquet(f"{root}/h", filters=[("k", "in", [1, 3])]))


def test_json_on_memory_urls(mem):
    root, fs = mem
    pdf = _frame(31)
    md.DataFrame(pdf, chunk_size=6).to_json(f"{root}/a.jsonl", orient="records", lines=True).execute()
    assert fs.cat(f"{root[9:]}/a.jsonl") == pdf.to_json(orient="records", lines=True).encode()
    assert_eq(md.read_json(f"{root}/a.jsonl", lines=True, chunk_bytes=100), pdf)


def test_storage_options_reach_the_filesystem(mem, monkeypatch):
    root, fs = mem
    _put(fs, f"{root}/a.csv", _frame().to_csv(index=False).encode())
    seen = []
    real = fsspec.core.url_to_fs

    def spy(url, **kw):
        seen.append(kw)
        return real(url)  # the memory filesystem takes no options

    monkeypatch.setattr(fsspec.core, "url_to_fs", spy)
    assert_eq(md.read_csv(f"{root}/a.csv", chunk_bytes=300, storage_options={"token": "t"}), _frame())
    assert seen and all(kw == {"token": "t"} for kw in seen)


# ----------------------------------------------------------------- http
class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files with byte ranges (``Range: bytes=a-b``), as object stores and CDNs do."""

    def log_message(self, *args):
        pass

    def send_head(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return None
        size = os.path.getsize(path)
        f = open(path, "rb")  # noqa: SIM115 - the server closes it
        spec = self.headers.get("Range")
        if spec and spec.startswith("bytes="):
            a, _, b = spec[6:].partition("-")
            start, stop = int(a or 0), min(int(b) + 1 if b else size, size)
            f.seek(start)
            self._left = stop - start
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{size}")
            self.send_header("Content-Length", str(stop - start))
        else:
            self._left = size
            self.send_response(200)
            self.send_header("Content-Length", str(size))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        return f

    def copyfile(self, source, outputfile):
        outputfile.write(source.read(self._left))


@pytest.fixture
def http_dir(tmp_path):
    handler = lambda *a, **kw: _RangeHandler(*a, directory=str(tmp_path), **kw)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    _stop_fsspec_io()


def _stop_fsspec_io() -> None:
    """Close fsspec's HTTP sessions and its IO loop (whose self-pipe is a socket pair the suite counts)."""
    import fsspec.asyn
    from fsspec.implementations.http import HTTPFileSystem

    loop = fsspec.asyn.loop[0]
    for inst in list(HTTPFileSystem._cache.values()):
        if inst._session is not None and loop is not None:
            fsspec.asyn.sync(loop, inst._session.close)
    HTTPFileSystem.clear_instance_cache()
    if loop is not None:
        loop.call_soon_threadsafe(loop.stop)
        fsspec.asyn.iothread[0].join(5)
        loop.close()
        fsspec.asyn.loop[0] = fsspec.asyn.iothread[0] = None


@pytest.mark.parametrize("chunk_bytes", [150, None])
def test_read_csv_json_and_parquet_over_http(http_dir, chunk_bytes):
    folder, url = http_dir
    pdf = _frame(80)
    pdf.to_csv(folder / "a.csv", index=False)
    pdf.to_json(folder / "a.jsonl", orient="records", lines=True)
    pdf.to_parquet(folder / "a.parquet", row_group_size=30)
    df = md.read_csv(f"{url}/a.csv", chunk_bytes=chunk_bytes)
    assert_eq(df, pd.read_csv(folder / "a.csv"))
    if chunk_bytes:
        assert len(df.chunks) > 3  # byte ranges of the remote file
    assert_eq(md.read_json(f"{url}/a.jsonl", lines=True, chunk_bytes=chunk_bytes), pdf)
    assert_eq(md.read_parquet(f"{url}/a.parquet", chunk_bytes=1), pd.read_parquet(folder / "a.parquet"))
    with pytest.raises(FileNotFoundError):
        md.read_csv(f"{url}/nope.csv")
