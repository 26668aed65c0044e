#!/usr/bin/env bash
# Jobs per second of forkulator (the paper authors' Java simulator), of the fused
# kernel and of the `forkjoin-sim simulate --engine fused` command on the same (9,3,2) queue: exponential service of mean 1, Poisson arrivals at
# 2.7 jobs per unit time (per-node load 0.9), non-purging, every 10th job sampled.
#
#   benchmarks/forkulator_compare.sh [FORKULATOR_DIR]      (JOBS=10000000 by default)
#
# FORKULATOR_DIR (or $FORKULATOR_DIR) is a checkout of the authors' forkulator-p,
#   git clone https://github.com/excelwang/forkulator
# which ships its two jars in lib/ (commons-math3-3.6.1.jar, commons-cli-1.2.jar).
# The script compiles its sources into a temporary directory and runs
#   forkulator.FJSimulator -A x 2.7 -S x 1.0 -q wklnc 1 -t 3 -w 9 -i 10 -n JOBS/10
# (wklnc = non-purging (k,l) worker queues, l = tasks - 1 = 2). Forkulator places a
# job's tasks on the next workers round-robin; the kernel places them on a uniform
# random subset (the paper's model), so their means differ; the speed comparison is
# like for like otherwise. Wall and CPU time are of whole processes (start-up
# included). Without java/javac or the checkout it prints SKIP and exits 0.
set -euo pipefail

JOBS=${JOBS:-10000000}
DIR=${1:-${FORKULATOR_DIR:-}}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-$HERE/.venv/bin/python}
MATH=commons-math3-3.6.1.jar
CLI=commons-cli-1.2.jar

skip() {
    echo "SKIP forkulator comparison: $*"
    exit 0
}

command -v java >/dev/null 2>&1 || skip "java not found (install a JDK, 8 or later)"
command -v javac >/dev/null 2>&1 || skip "javac not found (install a JDK, not only a JRE)"
[ -n "$DIR" ] || skip "no forkulator checkout given; git clone https://github.com/excelwang/forkulator and pass its path (or set FORKULATOR_DIR)"
[ -f "$DIR/lib/$MATH" ] && [ -f "$DIR/lib/$CLI" ] || skip "$DIR/lib lacks $MATH or $CLI"
[ -f "$DIR/src/forkulator/FJSimulator.java" ] || skip "$DIR/src/forkulator/FJSimulator.java not found"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CLASSPATH_JARS="$DIR/lib/$MATH:$DIR/lib/$CLI"
javac -nowarn -cp "$CLASSPATH_JARS" -d "$WORK/bin" $(find "$DIR/src" -name '*.java') \
    2>"$WORK/javac.log" || { cat "$WORK/javac.log"; skip "forkulator did not compile"; }

cd "$HERE"
"$PYTHON" - "$JOBS" "$WORK" "$CLASSPATH_JARS" <<'EOF'
import resource, subprocess, sys, time

jobs, work, jars = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def timed(command):
    """Output, wall seconds and CPU seconds (user + system) of a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, wall, cpu


java = ["java", "-Xmx2g", "-cp", f"{work}/bin:{jars}", "forkulator.FJSimulator",
        "-A", "x", "2.7", "-S", "x", "1.0", "-q", "wklnc", "1", "-t", "3", "-w", "9",
        "-i", "10", "-n", str(jobs // 10), "-o", f"{work}/run"]
out, wall, cpu = timed(java)
# Its last line: queue|arrival|service|w|t|l|stages|sojourn mean|...
rows = [("forkulator (Java), round-robin placement, 1 thread", wall, cpu,
         float(out.strip().splitlines()[-1].split("|")[7]))]
child = """
import sys
from forkjoin_sim.engines.fused.kernel import JobClass, KernelModel, poisson, run_fused
from forkjoin_sim.engines.fused.laws import exponential
jobs, workers = int(sys.argv[1]), int(sys.argv[2])
model = KernelModel((1.0,) * 9, (JobClass(3, 2, exponential(1.0)),), arrival=poisson(2.7))
r = run_fused(model, total_jobs=jobs // workers, replications=workers, workers=workers,
              sample_every=10, seed=1)
print(r.mean())
"""
for workers in (1, 2):
    out, wall, cpu = timed([sys.executable, "-c", child, str(jobs), str(workers)])
    rows.append((f"fused kernel, random placement, {workers} thread(s)", wall, cpu,
                 float(out)))
cli = [sys.executable, "-m", "forkjoin_cli.main", "simulate", "--nodes", "9",
       "--replicas", "3", "--quorum", "2", "--rho", "2.7", "--jobs", str(jobs),
       "--sample-every", "10", "--engine", "fused", "--replications", "2",
       "--workers", "2", "--seed", "1", "--json"]
out, wall, cpu = timed(cli)
rows.append(("forkjoin-sim simulate --engine fused, CLI end to end, 2 threads", wall, cpu,
             float(out.split('"mean": ')[1].split(",")[0])))
print(f"(9,3,2), exponential, per-node load 0.9, {jobs:,} jobs, every 10th measured; "
      "whole processes (start-up, JIT or compile cache, run)\n")
print("| simulator | wall s | jobs/s (wall) | CPU s | jobs per CPU second | mean sojourn |")
print("|---|---:|---:|---:|---:|---:|")
for name, wall, cpu, mean in rows:
    print(f"| {name} | {wall:.2f} | {jobs / wall / 1e6:.2f} M | {cpu:.2f} | "
          f"{jobs / cpu / 1e6:.2f} M | {mean:.3f} |")
print(f"\nwall: fused 2 threads / forkulator {rows[0][1] / rows[2][1]:.1f}x;  "
      f"CLI 2 threads / forkulator {rows[0][1] / rows[3][1]:.1f}x;  CPU: "
      f"fused 1 thread / forkulator {rows[0][2] / rows[1][2]:.1f}x")
EOF
