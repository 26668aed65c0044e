"""Start-up of `forkjoin-sim simulate` with 10^5 jobs (the default engine), whole
processes, this checkout against an older tree in turn (warm caches, the first two
rounds dropped):

    git worktree add /tmp/old_su ab56481
    .venv/bin/python benchmarks/bench_startup_ab.py /tmp/old_su
"""
import subprocess, time, statistics, os, sys
cmd = ["-m", "forkjoin_cli", "simulate", "--nodes", "9", "--replicas", "3", "--quorum", "2", "--rho", "2.7", "--jobs", "100000", "--json"]
py = sys.executable
here = str(__import__("pathlib").Path(__file__).resolve().parents[1])
trees = {f"before ({sys.argv[1]})": sys.argv[1], "now (this checkout)": here}
env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
times = {k: [] for k in trees}
for rnd in range(12):
    for name, tree in trees.items():
        e = dict(env, PYTHONPATH=tree)
        t = time.perf_counter(); subprocess.run([py, *cmd], cwd=tree, env=e, capture_output=True, check=True); dt = time.perf_counter() - t
        if rnd >= 2: times[name].append(dt)
for name, v in times.items():
    print(f"{name}: median {statistics.median(v):.3f} s, min {min(v):.3f} s, max {max(v):.3f} s over {len(v)} runs")
