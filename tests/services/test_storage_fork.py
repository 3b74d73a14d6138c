"""Thread pools of the storage and upload paths survive a fork (workers started from a process that used them)."""

from __future__ import annotations

import asyncio
import os
import uuid

import numpy as np
import pytest

from mars.services.storage import cache
from mars.services.storage.shm import SHM_DIR, put_object, unlink_prefix


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_unlinks_big_segments_on_a_thread_of_its_own():
    prefix = f"mars-test-{uuid.uuid4().hex[:12]}"
    big = np.zeros(1 << 18)  # 2 MB: unlinked on the thread

    async def unlink(desc) -> None:
        pending = cache._unlink_all([desc])
        assert pending is not None
        await asyncio.wait_for(asyncio.wrap_future(pending), 5)

    try:
        asyncio.run(unlink(put_object("parent", big, prefix)))  # the parent has made its executor
        desc = put_object("child", big, prefix)
        pid = os.fork()
        if pid == 0:  # the child inherits the executor but not its thread
            code = 1
            try:
                asyncio.run(unlink(desc))
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the child's unlink never ran"
        assert not os.path.exists(os.path.join(SHM_DIR, desc.shm_name))
    finally:
        unlink_prefix(prefix)
