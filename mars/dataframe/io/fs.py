"""Where files live: local paths, or any filesystem fsspec knows by URL.

A plain path (or ``file://``) is read and written with the standard library,
the fastest way on one machine, and needs nothing installed. A URL with
another scheme (``memory://``, ``http(s)://``, ``s3://``, ...) goes through
``fsspec`` (an optional extra: ``pip install 'pymars[fsspec]'``), with the
caller's ``storage_options`` given to the filesystem; ``s3://`` and the like
need their own fsspec backend (``s3fs``, ...) installed too. Paths travel to
the workers as strings and each process opens them again: a ``memory://``
filesystem is one process's memory, so it serves embedded sessions (and tests).
"""

from __future__ import annotations

import glob
import io
import os
import re
from typing import Any

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*)://")


def is_url(path: str) -> bool:
    """Whether ``path`` names a file through fsspec (a scheme other than ``file://``).

    >>> is_url("memory://data/a.csv"), is_url("/tmp/a.csv"), is_url("file:///tmp/a.csv")
    (True, False, False)
    """
    m = _SCHEME.match(path)
    return m is not None and m.group(1).lower() != "file"


def local_path(path: str) -> str:
    """``path`` without a ``file://`` prefix, the user's ``~`` expanded."""
    if path.lower().startswith("file://"):
        path = path[len("file://"):]
    return os.path.expanduser(path)


def fsspec_module() -> Any:
    """fsspec, imported on first use: it is optional, and local files need nothing."""
    try:
        import fsspec
    except ImportError as e:
        raise ImportError("reading or writing URLs needs fsspec: pip install 'pymars[fsspec]'") from e
    return fsspec


def filesystem(path: str, storage_options: dict | None) -> tuple[Any, str]:
    """(fsspec filesystem, its path) for a URL."""
    return fsspec_module().core.url_to_fs(path, **(storage_options or {}))


def _natural_key(path: str) -> list:
    """``part.10`` after ``part.9``: runs of digits compare as numbers."""
    return [int(s) if s.isdigit() else s for s in re.split(r"(\d+)", path)]


def _expand_url(url: str, storage_options: dict | None) -> list[str]:
    fs, p = filesystem(url, storage_options)
    if glob.has_magic(p) and not url.lower().startswith(("http://", "https://")):
        matches = [m for m in fs.glob(p) if fs.isfile(m)]
        if not matches:
            raise FileNotFoundError(f"no files match {url!r}")
        return [fs.unstrip_protocol(m) for m in sorted(matches, key=_natural_key)]
    if not fs.isfile(p):
        raise FileNotFoundError(f"[Errno 2] No such file or directory: {url!r}")
    return [url]


def expand_paths(path: Any, storage_options: dict | None = None) -> list[str]:
    """Files named by a path or URL, a glob pattern, or a list of them (globs in natural order).

    Raises ``FileNotFoundError`` as pandas does for a path that does not exist.

    >>> expand_paths([__file__]) == [__file__]
    True
    """
    items = list(path) if isinstance(path, (list, tuple)) else [path]
    if not items:
        raise ValueError("no paths given")
    out: list[str] = []
    for item in items:
        p = os.fspath(item)
        if not isinstance(p, str):
            raise TypeError(f"paths must be strings or os.PathLike, got {type(item).__name__}")
        if is_url(p):
            out.extend(_expand_url(p, storage_options))
            continue
        p = local_path(p)
        if glob.has_magic(p):
            matches = sorted((m for m in glob.glob(p) if os.path.isfile(m)), key=_natural_key)
            if not matches:
                raise FileNotFoundError(f"no files match {p!r}")
            out.extend(matches)
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise FileNotFoundError(f"[Errno 2] No such file or directory: {p!r}")
    return out


def file_token(path: str, storage_options: dict | None = None) -> tuple:
    """``(path, size, version)``: what identifies a file's content cheaply (a changed file gets new keys)."""
    if not is_url(path):
        st = os.stat(path)
        return (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    fs, p = filesystem(path, storage_options)
    info = fs.info(p)
    version = next((str(info[k]) for k in ("mtime", "LastModified", "ETag", "etag", "created") if info.get(k)), "")
    return (path, int(info.get("size") or 0), version)


def open_file(path: str, mode: str = "rb", storage_options: dict | None = None) -> Any:
    """An open file object: the builtin one for a local path, fsspec's for a URL."""
    if not is_url(path):
        return open(local_path(path), mode)
    fs, p = filesystem(path, storage_options)
    if mode == "rb" and "memory" in _protocols(fs):
        # the memory filesystem hands every reader the same buffer (one position): threads need their own
        return io.BytesIO(fs.cat_file(p))
    return fs.open(p, mode)


def _protocols(fs: Any) -> tuple:
    return (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)


def file_size(path: str, storage_options: dict | None = None) -> int:
    if not is_url(path):
        return os.path.getsize(local_path(path))
    fs, p = filesystem(path, storage_options)
    return int(fs.size(p))


def remove(path: str, storage_options: dict | None = None) -> None:
    if not is_url(path):
        os.remove(local_path(path))
        return
    fs, p = filesystem(path, storage_options)
    fs.rm(p)


def makedirs(path: str, storage_options: dict | None = None) -> None:
    """A directory (and its parents) where files will be written; nothing to do on object stores."""
    if not is_url(path):
        os.makedirs(local_path(path), exist_ok=True)
        return
    fs, p = filesystem(path, storage_options)
    fs.makedirs(p, exist_ok=True)


def isdir(path: str, storage_options: dict | None = None) -> bool:
    if not is_url(path):
        return os.path.isdir(local_path(path))
    fs, p = filesystem(path, storage_options)
    return bool(fs.isdir(p))


def join(directory: str, name: str) -> str:
    """``name`` inside ``directory``, with ``/`` for URLs and the OS separator for local paths."""
    if is_url(directory):
        return directory.rstrip("/") + "/" + name
    return os.path.join(local_path(directory), name)


def part_paths(path: str, n: int, name_function: Any = None) -> list[str]:
    """One path per partition: the ``*`` in ``path`` replaced by ``name_function(i)``.

    By default the partition number, zero-padded so that the files sort in
    partition order (``part-00.csv`` ... ``part-11.csv``).

    >>> part_paths("out-*.csv", 11)[:2], part_paths("o-*.csv", 2, lambda i: f"x{i}")
    (['out-00.csv', 'out-01.csv'], ['o-x0.csv', 'o-x1.csv'])
    """
    if path.count("*") != 1:
        raise ValueError(f"a path for one file per partition holds one '*' (replaced by the partition's name), "
                         f"got {path!r}")
    width = len(str(max(n - 1, 0)))
    names = [str(name_function(i)) if name_function is not None else str(i).zfill(width) for i in range(n)]
    return [path.replace("*", name) for name in names]
