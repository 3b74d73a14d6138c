"""Where a supervisor leaves its token for the same user's processes on its host (mars.oscar.tokenfile)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time

import pytest

from mars.oscar import tokenfile


@pytest.fixture(autouse=True)
def runtime(tmp_path, monkeypatch):
    folder = tmp_path / "runtime"
    monkeypatch.setenv("MARS_RUNTIME_DIR", str(folder))
    return folder


def test_a_written_token_is_found_by_any_local_name_of_its_ports_and_goes_at_remove(runtime):
    files = tokenfile.write_token_files(["127.0.0.1:7001", "http://127.0.0.1:7005"], "tok-1")
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files.paths)
    for address in ("127.0.0.1:7001", "localhost:7001", "http://localhost:7005/?x=1", "[::1]:7005"):
        assert tokenfile.find_token(address) == "tok-1", address
    assert tokenfile.find_token("192.0.2.1:7001") is None  # another host's port is not ours to answer for
    assert tokenfile.find_token("127.0.0.1:7002") is None
    files.remove()
    assert tokenfile.find_token("127.0.0.1:7001") is None


def test_a_stopped_writers_token_is_not_found_but_kept_for_a_restart_on_its_port(runtime):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    tokenfile.write_token_files(["127.0.0.1:7001"], "tok-2", keep=True)
    path = runtime / "port-7001.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "pid": int(dead.stdout)}))
    assert tokenfile.find_token("127.0.0.1:7001") is None
    assert tokenfile.previous_token(7001) == "tok-2"
    os.utime(path, (time.time() - tokenfile.STALE_SECONDS - 60,) * 2)
    tokenfile.write_token_files(["127.0.0.1:7009"], "tok-3")  # a day later, the next writer prunes it
    assert not path.exists()


def test_the_first_claim_of_a_cluster_wins_and_a_later_one_gets_its_token():
    first, files = tokenfile.shared_token("a:1,b:2", "mine")
    second, none = tokenfile.shared_token("a:1,b:2", "theirs")
    assert (first, second) == ("mine", "mine") and len(files.paths) == 1 and not none.paths
    files.remove()
    assert tokenfile.shared_token("a:1,b:2", "next")[0] == "next"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to make a foreign folder")
def test_a_runtime_folder_of_another_user_is_refused(runtime):
    runtime.mkdir(mode=0o700)
    os.chown(runtime, 65534, 65534)
    with pytest.raises(PermissionError, match="belongs to another user"):
        tokenfile.shared_token("k", "t")
    assert tokenfile.write_token_files(["127.0.0.1:7001"], "t").paths == []  # logged, not raised
