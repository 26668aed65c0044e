"""The paper's Fig. 2 experiment: its grid of queues and its measurement protocol.

Every (n, r, k) with n, r in {3, 5, 7, 9}, r <= n, k = 1..r, at eight job loads rho
(400 points), exponential service; after a warm-up every 10th job is sampled until
100,000 samples are taken. One module holds it so that the Fig. 2 command, the
estimator referee tables and the report read the same grid.
"""

from __future__ import annotations

import math

NODES = (3, 5, 7, 9)
REPLICAS = (3, 5, 7, 9)
LOADS = (0.01, 0.2, 0.4, 0.5, 0.6, 0.8, 0.9, 0.95)
#: The paper's protocol: after a warm-up, every 10th job is sampled until 100,000
#: samples are taken.
PAPER_SAMPLES = 100_000
PAPER_SAMPLE_EVERY = 10
WARMUP = 0.1


def paper_grid() -> list[tuple[int, int, int, float]]:
    """The 400 (nodes, replicas, quorum, load) points of the paper's Fig. 2."""
    return [(n, r, k, rho) for n in NODES for r in REPLICAS if r <= n
            for k in range(1, r + 1) for rho in LOADS]


def jobs_for_samples(samples: int, sample_every: int, warmup: float = WARMUP) -> int:
    """The fewest jobs whose measured count (after warm-up, every s-th) is ``samples``."""
    # A lower bound: the measured count is at most ceil(((1 - warmup)*jobs + 1) / s).
    jobs = max(1, math.floor((samples - 1) * sample_every / (1 - warmup)) - 2)
    while True:
        measured = -(-(jobs - math.floor(warmup * jobs)) // sample_every)
        if measured >= samples:
            return jobs
        jobs += 1
