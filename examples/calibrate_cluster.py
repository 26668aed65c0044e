"""Calibrate a measured Cassandra cluster from ONE alone and predict QUORUM and ALL.

The rows are Karpenko et al.'s (2021) cluster C (3 nodes, 3 replicas, YCSB reads,
100-1000 client threads; docs/data/karpenko2021/). The fit sees the ONE rows only;
what a higher level costs comes from the built-in prior (a lone request's extra time
at ALL, fitted on the published clusters in docs/data). The script prints each QUORUM
and ALL row's prediction with its 95% interval beside the measured value and the
guess "same as ONE", then writes the figure of the fit.

Those rows are not held out from the prior: cluster C is one of the clusters the
built-in level step was fitted on. With C left out of the prior, the same protocol
scores 4.6% (docs/cassandra/heldout.md, protocol (a)).

    python examples/calibrate_cluster.py [--tiny] [--figure fit.png]
"""

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from sizing.cluster_calibration import calibrate_cluster, predict_table

DATA = Path(__file__).resolve().parent.parent / "docs/data/karpenko2021/cluster_c.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true",
                        help="every other thread count (a quicker fit)")
    parser.add_argument("--figure", help="write the fit's figure (PNG) here")
    args = parser.parse_args()
    rows = pd.read_csv(DATA)
    reads = rows[rows.operation == "read"]
    if args.tiny:
        reads = reads[reads.threads % 200 == 0]
    one, held = reads[reads.consistency == "ONE"], reads[reads.consistency != "ONE"]
    fitted = calibrate_cluster(one, nodes=3, replicas=3)
    print("\n".join(f"note: {note}" for note in fitted.warnings))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        predicted = predict_table(fitted, held.drop(columns="mean_ms"))
    # the prediction's own notes (bands too wide to trust, levels never fitted); what
    # rests on the prior was printed above
    for note in dict.fromkeys(str(w.message) for w in caught):
        if "rest on the prior" not in note:
            print(f"note: {note}")
    same_as_one = one.set_index("threads").mean_ms.reindex(held.threads).to_numpy()
    print(f"{'level':>6} {'threads':>7} {'measured':>9} {'predicted':>9} "
          f"{'95% interval':>17} {'same as ONE':>11}")
    for (_, row), (_, guess), naive in zip(held.iterrows(), predicted.iterrows(),
                                           same_as_one):
        print(f"{row.consistency:>6} {row.threads:7d} {row.mean_ms:9.2f} "
              f"{guess.predicted_mean_ms:9.2f} [{guess.predicted_ci_low_ms:6.2f}, "
              f"{guess.predicted_ci_high_ms:6.2f}] {naive:11.2f}")
    measured = held.mean_ms.to_numpy()
    error = np.abs(predicted.predicted_mean_ms.to_numpy() / measured - 1)
    inside = (predicted.predicted_ci_low_ms <= measured) & (
        measured <= predicted.predicted_ci_high_ms)
    print("(cluster C is among the built-in prior's sources: not a held-out score)")
    print(f"mean error: model {100 * error.mean():.1f}%, same as ONE "
          f"{100 * np.mean(np.abs(same_as_one / measured - 1)):.1f}%; "
          f"{inside.sum()} of {len(held)} measured rows inside their 95% intervals")
    if args.figure:
        fitted.figure(args.figure, title="Karpenko C reads, fitted at ONE")


if __name__ == "__main__":
    main()
