"""What the lazy writers share: one file per partition, or one file, written on the workers.

``df.to_csv(path)`` and its siblings build a :class:`ToFiles` tileable and
return it, unexecuted, as Mars and Dask do: ``.execute()`` writes (and
returns the object, like every mars object); fetching it gives an empty
DataFrame. The ways to write (``how``):

- ``"files"``: a path with one ``*``: each partition writes its own file, the
  ``*`` replaced by the partition's number (zero-padded so that the files
  sort in partition order) or by ``name_function(i)``;
- ``"file"``: one file: where the format's parts append into the whole
  (CSV, JSON lines; no compression), each partition writes a part file next
  to the target in parallel and one task appends them in order and removes
  them; otherwise one task writes the partitions gathered;
- ``"text"``: no path: the partitions' text, in order (what pandas returns).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ...core.session import resolve_session
from ..core import PandasOperator
from .fs import is_url, local_path, open_file, part_paths, remove

_NOTHING = pd.DataFrame()


class WritePart(PandasOperator):
    """One partition written to ``path`` (``None``: returned as text in a one-row Series).

    Given several partitions, it writes them concatenated (for a format whose
    parts do not append into one file). Subclasses say how, in :meth:`write`;
    ``kwargs`` are the format's keywords.
    """

    params = ("path", "kwargs", "number", "storage_options")

    def write(self, part: Any, path: Any, kwargs: dict) -> Any:
        raise NotImplementedError

    def execute(self, *parts: Any) -> Any:
        kept = [p for p in parts if len(p)] or list(parts[:1])
        part = kept[0] if len(kept) == 1 else pd.concat(kept)
        kwargs = dict(self.kwargs)
        if self.path is not None and is_url(self.path):
            kwargs["storage_options"] = self.storage_options
        path = self.path if self.path is None or is_url(self.path) else local_path(self.path)
        text = self.write(part, path, kwargs)
        if self.path is None:
            return pd.Series([text], index=[self.number], dtype=object)
        return _NOTHING


def _append_local(out: Any, path: str) -> None:
    with open(path, "rb") as f:
        try:
            while os.sendfile(out.fileno(), f.fileno(), None, 1 << 30):
                pass
        except (AttributeError, OSError):  # no sendfile between these files: copy through Python
            f.seek(0)
            out.seek(0, os.SEEK_END)
            while block := f.read(1 << 24):
                out.write(block)


class JoinParts(PandasOperator):
    """Part files appended to ``path`` in order, then removed."""

    params = ("path", "parts", "mode", "storage_options", "if_empty")

    def execute(self, *done: Any) -> pd.DataFrame:
        mode = self.mode.replace("t", "").replace("b", "") + "b"
        so = self.storage_options
        with open_file(self.path, mode, so) as out:
            start = out.tell()
            for part in self.parts:
                if is_url(part):
                    with open_file(part, "rb", so) as f:
                        while block := f.read(1 << 24):
                            out.write(block)
                else:
                    _append_local(out, local_path(part))
                remove(part, so)
            if self.if_empty and out.tell() == start:
                out.write(self.if_empty)
        return _NOTHING


class ToFiles(PandasOperator):
    """``to_<format>(path)``: the class's ``writer`` (a :class:`WritePart`) per partition, as ``how`` says.

    Each format subclasses it, naming its writer.
    """

    writer: type[WritePart] = WritePart
    #: what the whole is when every partition wrote nothing (JSON lines of no rows: one line break)
    if_empty: bytes = b""
    params = ("kwargs", "storage_options", "path", "how", "appendable", "name_function", "first_kwargs")

    @classmethod
    def tile(cls, op: ToFiles) -> Tiled:
        chunks = list(op.inputs[0].chunks)
        meta = op.outputs[0].meta
        n = len(chunks)
        so = op.storage_options
        if op.how == "files":
            paths = part_paths(op.path, n, op.name_function)
            out = [op.writer(path=p, kwargs=op.kwargs, number=i, storage_options=so).new_chunk(
                [c], index=(i, 0), shape=(0, 0), meta=meta) for i, (p, c) in enumerate(zip(paths, chunks))]
            return Tiled(out, ((0,) * n, (0,)))
        if op.how == "file" and not op.appendable:
            gathered = op.writer(path=op.path, kwargs=op.kwargs, number=0, storage_options=so)
            return Tiled([gathered.new_chunk(chunks, index=(0, 0), shape=(0, 0), meta=meta)], ((0,), (0,)))
        parts = []
        for i, c in enumerate(chunks):
            kwargs = op.kwargs if i == 0 else {**op.kwargs, **op.first_kwargs}
            path = None if op.how == "text" else f"{op.path}.{op.key[:12]}.part{i}"
            kw = {"index": (i,), "shape": (1,)} if path is None else {"index": (i, 0), "shape": (0, 0)}
            part = op.writer(path=path, kwargs=kwargs, number=i, storage_options=so)
            parts.append(part.new_chunk([c], meta=meta, **kw))
        if op.how == "text":
            return Tiled(parts, ((1,) * n,))
        join = JoinParts(path=op.path, parts=[p.op.path for p in parts], mode=op.kwargs.get("mode", "w"),
                         storage_options=so, if_empty=op.if_empty)
        return Tiled([join.new_chunk(parts, index=(0, 0), shape=(0, 0), meta=meta)], ((0,), (0,)))


def lazy_write(data: Any, to: type[ToFiles], kwargs: dict, path: str, how: str,
               storage_options: dict | None = None, appendable: bool = True, name_function: Any = None,
               first_kwargs: dict | None = None) -> Any:
    """The lazy object whose ``.execute()`` writes ``data`` (``first_kwargs``: what parts after the first change)."""
    if how not in ("files", "file"):
        raise ValueError(f"how must be 'files' or 'file', got {how!r}")
    op = to(kwargs=kwargs, storage_options=storage_options, path=path, how=how,
                 appendable=appendable, name_function=name_function, first_kwargs=first_kwargs or {})
    return op.new_pandas([data], _NOTHING, (0, 0))


def text_of(data: Any, to: type[ToFiles], kwargs: dict, first_kwargs: dict, session: Any) -> str:
    """The partitions' text joined, computed now (what pandas returns when given no path)."""
    sess = resolve_session(session)
    op = to(kwargs=kwargs, storage_options=None, path=None, how="text", appendable=True,
                 name_function=None, first_kwargs=first_kwargs)
    texts = op.new_pandas([data], pd.Series([], dtype=object), (len(data.chunks or ()) or np.nan,))
    return "".join(texts.execute(session=sess).fetch(session=sess)) or to.if_empty.decode()


def choose_how(path: str, single_file: bool | None, option: str = "single_file") -> str:
    """``"files"`` for a path with ``*``, ``"file"`` for one without; ``single_file`` must agree."""
    has_star = "*" in path
    if single_file is None:
        return "files" if has_star else "file"
    if single_file and has_star:
        raise ValueError(f"{option}=True writes one file, but the path {path!r} has a '*' for one file per "
                         "partition")
    if not single_file and not has_star:
        raise ValueError(f"{option}=False writes one file per partition: put a '*' in the path (replaced by the "
                         f"partition number), got {path!r}")
    return "file" if single_file else "files"
