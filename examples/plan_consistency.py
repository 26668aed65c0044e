"""Choose read/write consistency (R, W) with R + W > r for a read-heavy mix.

Prints the planner's predictions for every pair and, next to them, a simulation of
reads and writes together on shared nodes.

    python examples/plan_consistency.py [--tiny]
"""

import argparse

from sizing.planning import plan_consistency, simulate_consistency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a quick run (seconds)")
    args = parser.parse_args()
    jobs = 20_000 if args.tiny else 200_000
    nodes, replicas, reads, rate = 6, 3, 0.8, 1.2
    for basic in ("simulation", "independent"):
        plan = plan_consistency(nodes, replicas, reads, rate, basic=basic, jobs=jobs,
                                seed=1)
        print(plan.report(), "\n")
    print(f"{'R':>2} {'W':>2} {'sim mix mean':>12} {'sim mix p99':>11} {'95% CI':>17}")
    measured = {}
    for option in plan.options:
        sim = simulate_consistency(nodes, replicas, reads, rate, option.read_quorum,
                                   option.write_quorum, jobs=jobs, seed=2)
        measured[option.read_quorum, option.write_quorum] = sim["mix_q"]
        print(f"{option.read_quorum:>2} {option.write_quorum:>2} {sim['mix_mean']:12.3f} "
              f"{sim['mix_q']:11.3f} [{sim['mix_q_low']:6.3f}, {sim['mix_q_high']:6.3f}]")
    print(f"simulated best (lowest mix p99): {min(measured, key=measured.get)}; "
          f"planner's best: ({plan.best.read_quorum}, {plan.best.write_quorum})")


if __name__ == "__main__":
    main()
