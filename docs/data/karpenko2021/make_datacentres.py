"""Writes the four ``--datacentres`` files of cluster D, one per choice of the client's
region (the paper does not say which machine stood where): the three nodes in the
other three of us-west-2, eu-west-2, sa-east-1, ap-south-1, the coordinator the node
nearest the client, and the one-way times = half the median round trip over the
sources of ``docs/data/aws_rtt/rtt.csv``.

    .venv/bin/python docs/data/karpenko2021/make_datacentres.py
"""

from pathlib import Path

import pandas as pd

REGIONS = ("us-west-2", "eu-west-2", "sa-east-1", "ap-south-1")
HERE = Path(__file__).resolve().parent


def main():
    rtt = pd.read_csv(HERE.parent / "aws_rtt" / "rtt.csv")
    median = rtt.groupby(["region_a", "region_b"]).rtt_ms.median()

    def round_trip(a, b):
        return float(median.get((a, b), median.get((b, a))))

    for client in REGIONS:
        places = [r for r in REGIONS if r != client] + [client]
        lines = ["# Karpenko et al. (2021) cluster D with the client machine in "
                 f"{client} (written by make_datacentres.py)",
                 "[datacentres]", "nodes = [0, 1, 2]", "client = 3",
                 'coordinator = "nearest"',
                 f'source = "half the median round trip of docs/data/aws_rtt/rtt.csv; '
                 f'data centres 0-3: {", ".join(places)}"',
                 "[datacentres.hops]"]
        for i in range(4):
            for j in range(i + 1, 4):
                lines.append(f'"{i}-{j}" = {round_trip(places[i], places[j]) / 2:.2f}')
        (HERE / f"cluster_d_client_{client}.toml").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
