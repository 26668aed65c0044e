"""Draw docs/steps_read_path.png: a Cassandra read as steps through queues.

    .venv/bin/python docs/steps_figure.py

The graph drawn is `forkjoin_sim.steps.cassandra_read(3, 2)` (QUORUM of 3, the
coordinator not a replica): boxes are steps queued at a station, plain text is a
pure delay (a network hop), the dashed box is the k-of-r join.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

OUT = Path(__file__).with_name("steps_read_path.png")

NODE = "#dbe9f6"     # a step queued on a node's cores (or a stage)
CLIENT = "#f6e7c8"   # a step on the client machine


def box(ax, x, y, text, colour, width=1.55, height=0.62, dashed=False):
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                                boxstyle="round,pad=0.04", facecolor=colour,
                                edgecolor="black", linestyle="--" if dashed else "-",
                                linewidth=1.0))
    ax.text(x, y, text, ha="center", va="center", fontsize=8.5)


def arrow(ax, start, end, label=None):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10,
                                 linewidth=0.9, color="black", shrinkA=2, shrinkB=2))
    if label:
        ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.12, label,
                ha="center", va="bottom", fontsize=7.5, style="italic", color="#444")


def main():
    fig, ax = plt.subplots(figsize=(11, 4.6))
    ax.set_xlim(-0.1, 14.55)
    ax.set_ylim(-0.9, 4.1)
    ax.axis("off")
    half = 0.78
    box(ax, 0.8, 1.6, "client work\n(client machine)", CLIENT)
    box(ax, 3.0, 1.6, "coordinate\n(coordinator)", NODE)
    arrow(ax, (0.8 + half, 1.6), (3.0 - half, 1.6), "hop")
    ys = (3.2, 1.6, 0.0)
    for i, y in enumerate(ys):
        box(ax, 5.0, y, "send\n(coordinator)", NODE, width=1.2)
        box(ax, 6.9, y, "receive\n(replica %d)" % (i + 1), NODE, width=1.2)
        box(ax, 8.6, y, ("data read" if i == 0 else "digest read")
            + "\n(replica %d)" % (i + 1), NODE, width=1.3)
        box(ax, 10.3, y, "reply\n(replica %d)" % (i + 1), NODE, width=1.2)
        arrow(ax, (3.0 + half, 1.6), (5.0 - 0.6, y))
        arrow(ax, (5.6, y), (6.3, y), "hop")
        arrow(ax, (7.5, y), (7.95, y))
        arrow(ax, (9.25, y), (9.7, y))
        box(ax, 11.9, y, "receive\n(coordinator)", NODE, width=1.2)
        arrow(ax, (10.9, y), (11.3, y), "hop")
        arrow(ax, (12.5, y), (12.95, 1.6 + (y - 1.6) * 0.25))
    box(ax, 13.7, 1.6, "join at 2 of 3,\nthen respond\n(coordinator)", NODE,
        width=1.45, height=1.0, dashed=True)
    ax.annotate("", xy=(0.8, 1.6 - 0.31), xytext=(13.7, 1.6 - 0.5),
                arrowprops=dict(arrowstyle="-|>", linewidth=0.9,
                                connectionstyle="arc3,rad=-0.13"))
    ax.text(7.2, -0.75, "hop back to the client, then client work: the answer",
            ha="center", fontsize=7.5, style="italic", color="#444")
    ax.text(0.0, 3.95, "A Cassandra read at QUORUM (2 of 3) as steps: boxes queue at a "
            "station (FCFS, c servers: a node's cores or one of its stages); "
            "hops are pure delays", fontsize=9)
    fig.tight_layout()
    fig.savefig(OUT, dpi=130)
    print(OUT)


if __name__ == "__main__":
    main()
