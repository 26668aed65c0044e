"""The latency-vs-load sweep of latency_vs_load.py, run on a Dask cluster.

Starts a ``LocalCluster`` of --workers single-threaded worker processes (or
connects to --address, a running scheduler such as tcp://10.0.0.1:8786, whose
workers must have forkjoin-sim installed), runs the sweep there and prints the
same table. With --compare it runs the sweep on local processes too and checks
that every number agrees: a point's numbers depend only on its description.

    python examples/dask_sweep.py [--tiny] [--workers 2] [--address ADDR] [--compare]

--tiny (or FORKJOIN_EXAMPLES_TINY=1) runs a few small points, for the test suite.
"""

from __future__ import annotations

import argparse
import os
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true",
                        default=bool(os.environ.get("FORKJOIN_EXAMPLES_TINY")),
                        help="a few small points (for tests)")
    parser.add_argument("--workers", type=int, default=2,
                        help="workers of the LocalCluster (ignored with --address)")
    parser.add_argument("--address", default="local",
                        help="'local' for a LocalCluster, or a scheduler address")
    parser.add_argument("--compare", action="store_true",
                        help="also run on local processes and compare every number")
    parser.add_argument("--out", default="results/dask_sweep.csv")
    args = parser.parse_args(argv)

    # Imported here, not at the top: Dask's worker processes re-import this
    # script, and they start faster without the simulator's imports.
    import pandas as pd

    import forkjoin_sim
    from sizing.sweep_columns import annotate

    ANALYTIC = (annotate,)  # Theorem 3 beside each simulated row
    from latency_vs_load import load_curve_spec, table

    spec = load_curve_spec(args.tiny)
    started = time.perf_counter()
    frame = forkjoin_sim.sweep(spec, annotate=ANALYTIC, backend="dask", address=args.address,
                               workers=args.workers if args.address == "local" else None,
                               out=args.out)
    where = (f"a {args.workers}-worker LocalCluster" if args.address == "local"
             else args.address)
    print(f"on {where}: {len(frame)} points in {time.perf_counter() - started:.1f} s "
          "(cluster start-up included)")
    print(table(frame))
    print(f"rows: {args.out}")
    if args.compare:
        local = forkjoin_sim.sweep(spec, annotate=ANALYTIC, backend="processes", progress=False)
        # Wall-clock seconds per point are the one column that may differ.
        pd.testing.assert_frame_equal(frame.drop(columns="seconds"),
                                      local.drop(columns="seconds"), check_exact=True)
        print("identical to the local-process run: yes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
