#!/usr/bin/env bash
# Jobs per second of forkulator (the paper authors' Java simulator) and of the fused
# kernel on the same (9,3,2) queue: exponential service of mean 1, Poisson arrivals at
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
# like for like otherwise. Without java/javac or the checkout it prints SKIP and exits 0.
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

start=$(date +%s.%N)
java -Xmx2g -cp "$WORK/bin:$CLASSPATH_JARS" forkulator.FJSimulator -A x 2.7 -S x 1.0 \
    -q wklnc 1 -t 3 -w 9 -i 10 -n $((JOBS / 10)) -o "$WORK/run" >"$WORK/out.txt" \
    2>"$WORK/err.txt"
end=$(date +%s.%N)
# The last line: queue|arrival|service|w|t|l|stages|sojourn mean|...
FORKULATOR_MEAN=$(tail -n 1 "$WORK/out.txt" | cut -d'|' -f8)
FORKULATOR_SECONDS=$(echo "$end - $start" | bc -l)

cd "$HERE"
"$PYTHON" - "$JOBS" "$FORKULATOR_SECONDS" "$FORKULATOR_MEAN" <<'EOF'
import subprocess, sys, time

jobs, java_seconds, java_mean = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
child = """
import sys, time
from forkjoin_sim.engines.fused_kernel import JobClass, KernelModel, poisson, run_fused
from forkjoin_sim.kernel_laws import exponential
jobs, workers = int(sys.argv[1]), int(sys.argv[2])
model = KernelModel((1.0,) * 9, (JobClass(3, 2, exponential(1.0)),), arrival=poisson(2.7))
start = time.perf_counter()
r = run_fused(model, total_jobs=jobs // workers, replications=workers, workers=workers,
              sample_every=10, seed=1)
print(time.perf_counter() - start, r.mean())
"""
rows = [("forkulator (Java), round-robin placement, 1 core", java_seconds, java_seconds,
         java_mean)]
for workers in (1, 2):
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", child, str(jobs), str(workers)],
                         capture_output=True, text=True, check=True).stdout.split()
    wall = time.perf_counter() - start
    rows.append((f"fused kernel, random placement, {workers} core(s)", wall,
                 float(out[0]), out[1]))
print(f"(9,3,2), exponential, per-node load 0.9, {jobs:,} jobs, every 10th measured\n")
print("| simulator | process wall s | jobs/s (process) | jobs/s (simulation) | mean sojourn |")
print("|---|---:|---:|---:|---:|")
for name, wall, inner, mean in rows:
    print(f"| {name} | {wall:.2f} | {jobs / wall / 1e6:.2f} M | {jobs / inner / 1e6:.2f} M"
          f" | {float(mean):.3f} |")
print(f"\nfused 2 cores / forkulator, whole processes: {java_seconds / rows[2][1]:.1f}x")
EOF
