"""Round-trip times seen by the four possible client placements of Karpenko et al.'s cluster D.

Cluster D has one client machine and three Cassandra nodes, one in each of the
four AWS regions us-west-2, eu-west-2, sa-east-1 and ap-south-1. For each
choice of the client's region the three nodes sit in the other three regions,
and the coordinator is taken to be the node nearest the client. The script
prints the client-coordinator RTT and the coordinator's RTT to its nearest and
to its farthest other replica, using per pair the median over the published
sources in rtt.csv (the sources disagree; see README.md).

Run from the repository root:
    .venv/bin/python docs/data/aws_rtt/karpenko_d_placements.py
"""

from itertools import combinations
from pathlib import Path

import pandas as pd

REGIONS = ("us-west-2", "eu-west-2", "sa-east-1", "ap-south-1")
RTT_FILE = Path(__file__).with_name("rtt.csv")


def median_rtt_by_pair(path: Path = RTT_FILE) -> pd.DataFrame:
    """Median RTT (ms) over sources per unordered region pair, with the source count."""
    rows = pd.read_csv(path)
    # Pairs are unordered: sort the two names so (a, b) and (b, a) group together.
    ordered = rows[["region_a", "region_b"]].apply(sorted, axis=1, result_type="expand")
    rows["first"], rows["second"] = ordered[0], ordered[1]
    return rows.groupby(["first", "second"])["rtt_ms"].agg(median="median", sources="count")


def rtt_matrix(pairs: pd.DataFrame) -> pd.DataFrame:
    """Symmetric region-by-region matrix of the median RTTs (ms)."""
    matrix = pd.DataFrame(0.0, index=list(REGIONS), columns=list(REGIONS))
    for a, b in combinations(REGIONS, 2):
        key = tuple(sorted((a, b)))
        if key not in pairs.index:
            raise ValueError(f"rtt.csv has no source for the pair {a} / {b}; add a row for it")
        matrix.loc[a, b] = matrix.loc[b, a] = pairs.loc[key, "median"]
    return matrix


def placements(matrix: pd.DataFrame) -> pd.DataFrame:
    """One row per client region: coordinator and the three RTTs that shape a request."""
    out = []
    for client in REGIONS:
        nodes = [r for r in REGIONS if r != client]
        coordinator = min(nodes, key=lambda n: matrix.loc[client, n])
        others = matrix.loc[coordinator, [n for n in nodes if n != coordinator]]
        out.append({
            "client": client,
            "coordinator": coordinator,
            "client_coord_ms": matrix.loc[client, coordinator],
            "nearest_replica": others.idxmin(),
            "coord_nearest_ms": others.min(),
            "farthest_replica": others.idxmax(),
            "coord_farthest_ms": others.max(),
        })
    return pd.DataFrame(out)


def main() -> None:
    pairs = median_rtt_by_pair()
    print("Median RTT per pair over sources (ms):")
    print(pairs.round(1).to_string())
    print()
    print("Median RTT matrix (ms):")
    print(rtt_matrix(pairs).round(1).to_string())
    print()
    print("Client placements (coordinator = node nearest the client):")
    print(placements(rtt_matrix(pairs)).round(1).to_string(index=False))


if __name__ == "__main__":
    main()
