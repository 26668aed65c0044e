"""The smallest cluster meeting "p99 write latency <= 8 ms at 2 writes per ms".

Service times: exponential, mean 1 ms. Allowed: r >= 3, consistency QUORUM or ALL.
The plan simulates each candidate (the default, "direct"), or uses Theorem 1 on basic
queues (analytic "independent" ones, or simulated); the chosen cluster and the next
smaller one are then simulated again.

    python examples/plan_capacity.py [--tiny]
"""

import argparse

from sizing.planning import plan_capacity, simulate_capacity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a quick run (seconds)")
    args = parser.parse_args()
    jobs = 20_000 if args.tiny else 200_000
    for basic in ("direct", "independent", "simulation"):
        plan = plan_capacity(2.0, 8.0, levels=("QUORUM", "ALL"), min_replicas=3,
                             max_replicas=5, max_nodes=16, basic=basic, jobs=jobs,
                             seed=1)
        print(plan.report())
        best = plan.best
        if best is None:
            continue
        sim = simulate_capacity(best, 2.0, jobs=jobs, seed=2)
        print(f"  simulated p99 of n={best.nodes}: {sim.mean:.3f} "
              f"[{sim.low:.3f}, {sim.high:.3f}]")
        for c in plan.candidates:
            if (c.nodes, c.replicas, c.quorum) == (best.nodes - 1, best.replicas,
                                                   best.quorum) and c.node_load < 1:
                s = simulate_capacity(c, 2.0, jobs=jobs, seed=3)
                print(f"  n={c.nodes} predicted {c.predicted:.3f}, simulated "
                      f"{s.mean:.3f} [{s.low:.3f}, {s.high:.3f}]")
        print()


if __name__ == "__main__":
    main()
