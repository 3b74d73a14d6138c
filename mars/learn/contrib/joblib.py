"""A joblib backend, ``'mars'``: joblib's batches (scikit-learn's ``n_jobs`` loops) run as mars tasks.

Importing this module registers the backend. Each batch joblib submits is
pickled (cloudpickle, so local functions travel too) into one task of the
session: in an embedded session it runs on the session's thread pool, on a
cluster it runs on a worker. Several batches run at once, each a task of
its own, and joblib collects them as they finish.

>>> import joblib
>>> from mars.learn.contrib import joblib as _  # registers 'mars'
>>> with joblib.parallel_backend("mars", n_jobs=2):
...     joblib.Parallel()(joblib.delayed(pow)(i, 2) for i in range(4))
[0, 1, 4, 9]
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import cloudpickle
import joblib
import numpy as np
from joblib.parallel import ParallelBackendBase, SequentialBackend

from ...core.operator import Tiled
from ...core.options import options
from ...core.session import resolve_session
from ...tensor.core import Tensor, TensorOperator

__all__ = ["MarsJoblibBackend", "register_mars_backend"]


class RunBatch(TensorOperator):
    """A 0-d object tensor: the list of results of one joblib batch (pickled in ``payload``)."""

    params = ("payload", "token")

    @classmethod
    def tile(cls, op: RunBatch) -> Tiled:
        chunk = op.copy().new_chunk([], index=(), shape=(), dtype=np.dtype(object), order="C")
        return Tiled([chunk], ())

    def execute(self) -> np.ndarray:
        batch = cloudpickle.loads(self.payload)
        with joblib.parallel_backend(SequentialBackend()):  # a batch never fans out again from a worker
            results = batch()
        out = np.empty((), dtype=object)
        out[()] = results
        return out


def batch_tensor(func: Callable[[], Any]) -> Tensor:
    """The lazy tensor that runs ``func()`` (one joblib batch) as a task."""
    op = RunBatch(payload=cloudpickle.dumps(func), token=uuid.uuid4().hex)
    return op.new_tensor([], (), np.dtype(object))


class MarsJoblibBackend(ParallelBackendBase):
    """joblib's batches as tasks of a mars session (the default session unless ``session`` is given)."""

    supports_retrieve_callback = True
    supports_timeout = True
    uses_threads = False
    supports_sharedmem = False

    def __init__(self, session: Any = None, n_parallel: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.session = session
        self.n_parallel = n_parallel

    def effective_n_jobs(self, n_jobs: int | None) -> int:
        if n_jobs == 0:
            raise ValueError("n_jobs == 0 in Parallel has no meaning")
        if n_jobs is None or n_jobs < 0:
            return self.n_parallel or options.effective_threads()
        return n_jobs

    def submit(self, func: Callable[[], Any], callback: Callable | None = None) -> Any:
        session = resolve_session(self.session)
        future = session.execute(batch_tensor(func), wait=False, show_progress=False)
        if callback is not None:
            future.add_done_callback(callback)
        return future

    def retrieve_result_callback(self, out: Any) -> Any:
        return out.result()

    def retrieve_result(self, out: Any, timeout: float | None = None) -> Any:
        return out.result(timeout)

    def get_nested_backend(self) -> tuple[ParallelBackendBase, int]:
        return SequentialBackend(nesting_level=(self.nesting_level or 0) + 1), 1


def register_mars_backend() -> None:
    """Register ``'mars'`` with joblib (done when this module is imported)."""
    joblib.register_parallel_backend("mars", MarsJoblibBackend)


register_mars_backend()
