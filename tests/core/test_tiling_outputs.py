"""Tiling an op that was unpickled with only some of its outputs (as a cluster's supervisor receives it)."""

from __future__ import annotations

import pickle

import numpy as np

import mars
import mars.tensor as mt


def test_an_op_unpickled_with_its_first_output_only_still_tiles():
    a = np.random.default_rng(0).standard_normal((12, 3))
    q, _r = mt.linalg.qr(mt.tensor(a, chunk_size=4))
    q_alone = pickle.loads(pickle.dumps(q.data))  # R is not in the message: its op links Q only
    assert len(q_alone.op.outputs) == 1 and len(q_alone.op.output_keys) == 2
    with mars.new_session(default=False) as sess:
        value = sess.run(q_alone)
    np.testing.assert_allclose(np.abs(value), np.abs(np.linalg.qr(a)[0]), rtol=1e-10, atol=1e-12)
