"""Rows and a known truth shared by the tests of the calibrated closed-network model
(`test_network_model.py`, `test_network_model_file.py`)."""

import numpy as np

from sizing.closed_network import Demands, predict

LEVELS = {"ONE": 1, "QUORUM": 2, "ALL": 3}
TRUTH = Demands(client=0.05, hop_client=0.3, hop_replica=0.3, coordinate=0.1,
                message=0.01, work=0.2, digest_ratio=0.5)
THREADS = (4, 16, 64)


def rows(pairs, write=False):
    """Closed-loop rows of (level, threads) ``pairs`` of 3 nodes and 3 replicas, as
    `sizing.closed_network.predict` takes them."""
    return dict(threads=np.array([t for _, t in pairs], float),
                think_ms=np.zeros(len(pairs)), nodes=np.full(len(pairs), 3),
                replicas=np.full(len(pairs), 3),
                quorum=np.array([LEVELS[level] for level, _ in pairs]),
                write=np.full(len(pairs), write))


def truth(pairs, structure="shared-digest"):
    """The mean latency (ms) of `TRUTH` at ``pairs``."""
    return predict(TRUTH, rows(pairs), structure, 4, 4)[0]
