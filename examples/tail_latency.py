"""Tail latency of (n,r,k) queues from Theorem 1 on CDFs, against direct simulation.

Prints model vs simulated p50/p95/p99 for three basic-queue sources (simulated
with common random numbers, independent approximation, mean-matched
approximation), whether the model's percentile is precise (column "precise": its CDF
is free of sampling noise there, as an approximation's always is; how accurate the
model is, the "error" column against simulation says), and a timeout table.

    python examples/tail_latency.py [--tiny]
"""

import argparse

from sizing.tails import compare_percentiles, timeout_table

QUEUES = [(3, 3, 1, 0.5), (3, 3, 2, 0.8), (5, 5, 3, 0.8), (9, 3, 2, 2.4), (9, 9, 1, 0.5)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a quick run (seconds)")
    args = parser.parse_args()
    jobs = 20_000 if args.tiny else 200_000
    queues = QUEUES[:2] if args.tiny else QUEUES
    print(f"{'basic':>12} {'queue':>16} {'p':>3} {'model':>8} {'bracket':>19} "
          f"{'precise':>8} {'simulated':>9} {'95% CI':>19} {'error':>7}")
    for basic in ("simulation", "independent", "mean-matched"):
        for row in compare_percentiles(queues, basic=basic, jobs=jobs, seed=1):
            queue = f"({row['nodes']},{row['replicas']},{row['quorum']}) {row['load']:g}"
            print(f"{basic:>12} {queue:>16} {row['percentile']:>3g} {row['model']:8.3f} "
                  f"[{row['model_low']:7.3f},{row['model_high']:8.3f}] "
                  f"{str(row['model_reliable']):>8} {row['simulated']:9.3f} "
                  f"[{row['simulated_low']:7.3f},{row['simulated_high']:8.3f}] "
                  f"{row['error']:+7.1%}")
    print("\ntimeouts, (5,3,2), basic queues simulated:")
    print(f"{'load':>5} {'timeout':>7} {'avail model':>11} {'avail sim':>9} "
          f"{'answered model':>14} {'answered sim':>12} {'waiting model':>13} "
          f"{'waiting sim':>11}")
    for r in timeout_table(5, 3, 2, loads=[0.8, 1.4], timeouts=[2.0, 5.0, 10.0],
                           jobs=jobs, seed=2):
        print(f"{r['load']:5g} {r['timeout']:7g} {r['model_availability']:11.4f} "
              f"{r['sim_availability']:9.4f} {r['model_answered_mean']:14.3f} "
              f"{r['sim_answered_mean']:12.3f} {r['model_waiting_mean']:13.3f} "
              f"{r['sim_waiting_mean']:11.3f}")


if __name__ == "__main__":
    main()
