"""The paper's (9,3,2) at per-node load 0.9: 2e7 jobs on the fast engine, then 1e8 on
the fused engine with one thread, in one process. Time whole processes, alternating
the current checkout with an older one (OLD) pair by pair:

    /usr/bin/time -v .venv/bin/python benchmarks/bench_small_jobs.py
    (cd OLD && PYTHONPATH=OLD /usr/bin/time -v /path/to/.venv/bin/python \\
        /path/to/benchmarks/bench_small_jobs.py)
"""

from forkjoin_sim import ForkJoinModel, simulate

model = ForkJoinModel(9, 3, 2, load=2.7)
simulate(model, jobs=20_000_000, engine="fast", progress=False)
simulate(model, jobs=100_000_000, engine="fused", workers=1, progress=False)
