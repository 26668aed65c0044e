"""What one node at half speed does to (6,3,2) and (6,3,3), open and closed loop.

Six nodes, three replicas per job, random placement, exponential service of mean 1.
For each quorum, the same cluster with all nodes equal and with node 0 at half speed:

- open loop at 0.9 jobs per unit time: every node gets 0.45 units of work per unit
  time, so the equal nodes are busy 45% of the time and the slow one 90%;
- closed loop with 8 clients thinking 2 time units on average (YCSB-style): the
  throughput is an output.

    python examples/uneven_nodes.py [--tiny]
"""

import argparse

from forkjoin_sim import ForkJoinModel, simulate

SLOW = (0.5, 1.0, 1.0, 1.0, 1.0, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a quick run (seconds)")
    args = parser.parse_args()
    jobs = 40_000 if args.tiny else 1_000_000
    print(f"{'queue':>8} {'arrivals':>10} {'nodes':>6} {'mean':>8} {'95% CI':>19} "
          f"{'p99':>8} {'throughput':>10} {'slow node busy':>14}")
    for quorum in (2, 3):
        for loop in ("open", "closed"):
            for label, speeds in (("equal", None), ("slow", SLOW)):
                how = ({"arrival_rate": 0.9} if loop == "open"
                       else {"clients": 8, "think": 2.0})
                model = ForkJoinModel(6, 3, quorum, speeds=speeds, **how)
                r = simulate(model, jobs=jobs, seed=7)
                s = r.summary
                print(f"{f'(6,3,{quorum})':>8} {loop:>10} {label:>6} {s.mean:8.3f} "
                      f"[{s.ci_low:8.3f}, {s.ci_high:8.3f}] {s.p99:8.3f} "
                      f"{r.throughput.mean:10.4f} {r.utilisation[0]:14.3f}")
                for note in r.warnings:
                    print(f"{'':>8} warning: {note[:100]}...")


if __name__ == "__main__":
    main()
