"""The outputs of a fixed set of commands, for checking that a change of layout
changes no number.

``python benchmarks/command_outputs.py DIR`` runs every command of `COMMANDS` with the
installed ``forkjoin-sim`` and writes its standard output (and its ``--out`` file, if
any) into DIR, one file per command. Keys that measure wall time (``seconds``) are
removed from JSON, so two runs of the same code give the same bytes.
``tests/test_command_outputs.py`` compares them with the files recorded in
``tests/data/command_outputs/`` (made by this script before the restructuring).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: name -> arguments of ``forkjoin-sim``; OUT stands for an output file of the command.
COMMANDS: dict[str, list[str]] = {
    "simulate_fast": "simulate --nodes 9 --replicas 3 --quorum 2 --rho 1.5 --jobs 20000 "
                     "--seed 3 --engine fast --json".split(),
    "simulate_simpy": "simulate --nodes 5 --replicas 3 --quorum 2 --rho 1 --jobs 3000 "
                      "--engine simpy --purging --seed 2 --json".split(),
    "simulate_fused": "simulate --nodes 9 --replicas 3 --quorum 2 --rho 2.7 --jobs 50000 "
                      "--engine fused --replications 2 --workers 1 --json".split(),
    "simulate_closed": "simulate --nodes 6 --replicas 1 --quorum 1 --clients 20 --think 2 "
                       "--jobs 20000 --seed 1 --engine fast --json".split(),
    "simulate_speeds": "simulate --nodes 6 --replicas 3 --quorum 2 --rho 0.9 "
                       "--speeds slow:1:0.5 --jobs 20000 --placement ring --engine fast "
                       "--json".split(),
    # the default engine (auto): a run long enough for the fused kernel
    "simulate_default": "simulate --nodes 9 --replicas 3 --quorum 2 --rho 2.7 "
                        "--jobs 2000000 --seed 5 --json".split(),
    "approx": "approx --nodes 9 --replicas 3 --quorum 2 --rho 2.7 --json".split(),
    "mix": "mix --nodes 3 --replicas 3 --reads B --read-consistency QUORUM --clients 20 "
           "--digest-mean 0.4 --write-mean 0.5 --jobs 20000 --engine fast --json".split(),
    "cassandra_predict": "cassandra predict --nodes 6 --replicas 3 --policy round-robin "
                         "--local-basic 0.3 --remote-basic 1:1.2,2:1.9,3:2.5 "
                         "--json".split(),
    "cassandra_simulate": "cassandra simulate --nodes 6 --replicas 3 --consistency QUORUM "
                          "--policy token-aware --rate 1.0 --local-service exp:0.2 "
                          "--remote-service exp:1 --jobs 20000 --json".split(),
    "staleness": "staleness --replicas 3 --read-quorum 1 --write-quorum 1 --rate 1 "
                 "--write-share 0.5 --jobs 4000 --json".split(),
    "timeouts": "timeouts --nodes 5 --replicas 3 --quorum 2 --loads 0.5 --timeouts 2,4 "
                "--sim-jobs 5000 --out OUT.csv".split(),
    "plan_consistency": "plan-consistency --nodes 3 --replicas 3 --read-fraction 0.5 "
                        "--rate 0.5 --jobs 5000 --out OUT.csv".split(),
    "plan_capacity": "plan-capacity --write-rate 1 --target 5 --max-nodes 6 "
                     "--max-replicas 3 --jobs 5000 --basic simulation --out OUT.csv".split(),
}

_TIMING = re.compile(r'"seconds": [0-9.e+-]+')


def _without_timing(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return _TIMING.sub('"seconds": 0', text)

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "seconds"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(data), sort_keys=True, indent=1) + "\n"


def run(name: str, out_dir: Path, executable: str = "forkjoin-sim") -> None:
    """Run command ``name`` and write its outputs into ``out_dir``."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [a.replace("OUT", str(Path(tmp) / "out")) for a in COMMANDS[name]]
        done = subprocess.run([executable, *args], capture_output=True, text=True,
                              env={**os.environ, "NUMBA_NUM_THREADS": "2"}, check=False)
        (out_dir / f"{name}.stdout").write_text(
            f"exit {done.returncode}\n" + _without_timing(done.stdout))
        for produced in sorted(Path(tmp).glob("out*")):
            (out_dir / f"{name}{produced.suffix}").write_bytes(produced.read_bytes())


def main(out_dir: str) -> None:
    target = Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    executable = str(Path(sys.executable).with_name("forkjoin-sim"))
    for name in COMMANDS:
        run(name, target, executable)
        print(name)


if __name__ == "__main__":
    main(sys.argv[1])
