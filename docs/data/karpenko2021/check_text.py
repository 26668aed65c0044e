"""The numbers Karpenko et al. (2021) state in their text, recomputed from eqs. 1-15.

Prints, for each statement of the paper that the regressions can reproduce, the
stated value and the value the transcribed curves (``regressions.csv``) give, and
compares the mixed-workload tables of section 4 (``mixed.csv``) with eqs. 13-15.
The README records the output.

Usage: python check_text.py
"""

import csv
from pathlib import Path

import numpy as np

from make_rows import HERE, LEVELS, THREADS, load_regressions, mean_latency_us

#: Read/write settings that guarantee strong consistency with 3 replicas, and the
#: (read level, write level) each averages (eqs. 13-15).
SETTINGS = {"1R-3W": ("ONE", "ALL"), "2R-2W": ("QUORUM", "QUORUM"),
            "3R-1W": ("ALL", "ONE")}


def curves(regressions, threads=THREADS):
    """{(cluster, operation, level): mean latency (us) at ``threads``}."""
    return {key: mean_latency_us(c, threads) for key, c in regressions.items()}


def mixed_us(regressions, cluster, setting, read_share, threads):
    """Eqs. 13-15: the read share times the read curve plus the rest times the write
    curve of a strong (R, W) setting, in microseconds."""
    read_level, write_level = SETTINGS[setting]
    reads = mean_latency_us(regressions[cluster, "read", read_level], threads)
    writes = mean_latency_us(regressions[cluster, "write", write_level], threads)
    return read_share * reads + (1 - read_share) * writes


def level_ratios(y):
    """Stated: ONE is faster than ALL 'on average' by 39%/21% (C) and 462%/506% (D);
    QUORUM costs 19%/11% (C) and 285%/300% (D) (section 3)."""
    stated = {("C", "read", "ALL"): 39, ("C", "write", "ALL"): 21,
              ("D", "read", "ALL"): 462, ("D", "write", "ALL"): 506,
              ("C", "read", "QUORUM"): 19, ("C", "write", "QUORUM"): 11,
              ("D", "read", "QUORUM"): 285, ("D", "write", "QUORUM"): 300}
    print("== level / ONE - 1 (%): stated | mean of per-thread ratios | ratio of means")
    for (cluster, operation, level), value in stated.items():
        high, one = y[cluster, operation, level], y[cluster, operation, "ONE"]
        print(f"{cluster} {operation:5s} {level:6s}: {value:4d} | "
              f"{100 * np.mean(high / one - 1):7.1f} | "
              f"{100 * (high.mean() / one.mean() - 1):7.1f}")
    print("== conclusions: strong consistency costs ~1.4x (C) and ~6x (D): ALL / ONE")
    for cluster in "CD":
        ratios = [np.mean(y[cluster, op, "ALL"] / y[cluster, op, "ONE"])
                  for op in ("read", "write")]
        print(f"{cluster}: reads {ratios[0]:.2f}x, writes {ratios[1]:.2f}x")


def write_vs_read(y):
    """Stated: in C writes are on average 18% faster than reads; in D 2% slower."""
    print("== write / read - 1 (%), stated C -18, D +2: per level and pooled")
    for cluster in "CD":
        per_level = {lvl: 100 * (y[cluster, "write", lvl].mean()
                                 / y[cluster, "read", lvl].mean() - 1)
                     for lvl in LEVELS}
        pooled = 100 * (np.mean([y[cluster, "write", lvl] for lvl in LEVELS])
                        / np.mean([y[cluster, "read", lvl] for lvl in LEVELS]) - 1)
        shown = ", ".join(f"{lvl} {v:+.1f}" for lvl, v in per_level.items())
        print(f"{cluster}: {shown}, pooled {pooled:+.1f}")


def throughput_bound(y):
    """Stated: maximum throughput ~14,000 ops/s (C) and ~400 (D) at ALL reads. A closed
    loop of n threads with mean latency L completes at most n / L per second."""
    print("== ALL reads: closed-loop bound threads / mean latency (ops/s); stated C "
          "14,000, D 400")
    for cluster, stated in (("C", 14000), ("D", 400)):
        bound = THREADS / (y[cluster, "read", "ALL"] * 1e-6)
        client = THREADS / stated - y[cluster, "read", "ALL"] * 1e-6
        print(f"{cluster}: bound {', '.join(f'{b:,.0f}' for b in bound)}; max "
              f"{bound.max():,.0f} at {THREADS[bound.argmax()]} threads")
        print(f"   time per request outside the measured latency if {stated:,} ops/s "
              f"held (s): {', '.join(f'{c:.3f}' for c in client)}")


def mixed_tables(regressions, path=HERE / "mixed.csv"):
    """Section 4, Tables 2 (C) and 3 (D) against eqs. 13-15 at the printed threads,
    and the 50/50 column at 200, 250, 300, 350, 400 threads instead."""
    with open(path, newline="") as handle:
        table = list(csv.DictReader(handle))
    print("== mixed tables: published / eqs. 13-15 - 1 (%), max |.| per cluster "
          "and mix")
    for cluster in "CD":
        for read_pct in ("10", "30", "50", "90"):
            rows = [r for r in table
                    if r["cluster"] == cluster and r["read_pct"] == read_pct]
            at_printed = [int(r["latency_us"]) / mixed_us(
                regressions, cluster, r["setting"], int(read_pct) / 100,
                int(r["threads"])) - 1 for r in rows]
            # x = 2, 2.5, 3, 3.5, 4 for the printed 200..1000 threads
            at_half = [int(r["latency_us"]) / mixed_us(
                regressions, cluster, r["setting"], int(read_pct) / 100,
                100 * (1.5 + int(r["threads"]) / 400)) - 1 for r in rows]
            print(f"{cluster} R/W={read_pct}/{100 - int(read_pct)}: at printed threads "
                  f"{100 * max(map(abs, at_printed)):6.2f}; at 200..400 threads "
                  f"{100 * max(map(abs, at_half)):6.2f}")
    print("== underlined (stated optimum) vs the smallest of eqs. 13-15 at the printed "
          "threads")
    def cell(r):
        return r["cluster"], int(r["threads"]), int(r["read_pct"])

    keys = sorted({cell(r) for r in table})
    agree = 0
    for cluster, threads, read_pct in keys:
        rows = [r for r in table if cell(r) == (cluster, threads, read_pct)]
        marked = next(r["setting"] for r in rows if r["underlined"] == "1")
        best = min(SETTINGS, key=lambda s: mixed_us(regressions, cluster, s,
                                                    read_pct / 100, threads))
        smallest_printed = min(rows, key=lambda r: int(r["latency_us"]))["setting"]
        agree += marked == best
        if marked != best or marked != smallest_printed:
            print(f"{cluster} {threads} threads R={read_pct}%: underlined {marked}, "
                  f"eqs. best {best}, smallest printed {smallest_printed}")
    print(f"underlined = best by eqs. 13-15 in {agree} of {len(keys)} cells")


def optimum_regions(regressions):
    """Stated: in C the 3R-1W / 1R-3W border lies at 30/70, and above 700 threads
    2R-2W is optimal for 30/70 to 55/45; in D the border lies near the middle; the
    optimal choice saves on average 8% (C) and 44% (D) against 2R-2W (Fig. 7)."""
    shares = np.linspace(0, 1, 101)
    threads = np.arange(100, 1001, 50)
    print("== optimum regions (eqs. 13-15 on a grid of read shares 0..1 and "
          "100..1000 threads)")
    for cluster in "CD":
        grid = {s: np.array([[mixed_us(regressions, cluster, s, p, t) for t in threads]
                             for p in shares]) for s in SETTINGS}
        names = list(SETTINGS)
        best = np.argmin(np.stack([grid[s] for s in names]), axis=0)
        for t_index, t in enumerate(threads):
            column = best[:, t_index]
            runs, start = [], 0
            for i in range(1, len(shares) + 1):
                if i == len(shares) or column[i] != column[start]:
                    runs.append(f"{names[column[start]]} {shares[start]:.2f}-"
                                f"{shares[i - 1]:.2f}")
                    start = i
            if t % 100 == 0:
                print(f"{cluster} {t:4d} threads, read share: {'; '.join(runs)}")
        saving = 1 - np.minimum.reduce([grid[s] for s in names]) / grid["2R-2W"]
        print(f"{cluster}: mean saving of the best setting against 2R-2W "
              f"{100 * saving.mean():.1f}% (stated {8 if cluster == 'C' else 44}%)")


def main():
    regressions = load_regressions()
    y = curves(regressions)
    level_ratios(y)
    write_vs_read(y)
    throughput_bound(y)
    mixed_tables(regressions)
    optimum_regions(regressions)


if __name__ == "__main__":
    main()
