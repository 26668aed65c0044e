"""``forkjoin-sim staleness``: how stale, and how fast, partial quorums are under load.

One key (or ``--keys K``, uniform or ``--zipf S`` popular) on N replicas; reads and
writes arrive as an open Poisson stream (or from closed-loop clients, ``--clients``)
and queue at every replica, in one FIFO queue
(``--structure shared``) or in separate read and mutation stages (``--structure
stages``, Cassandra), with ordered or independent channels and one, random or
token-aware coordinators. Per (R, W) and rate:
t-visibility, k-staleness, read and write latency percentiles, or with ``--session``
P(a session guarantee is violated) (``forkjoin_sim.staleness.queueing``, on the
steps engine). Give --read-quorum R and --write-quorum W, or --all-pairs. Times have
no unit of their own: service means, delays, --think, --t-grid and the latencies
reported are all in one unit of your choice (milliseconds with --profile, whose
delays are PBS's, in ms), and --rate is operations per that unit.

Without --rate and --clients: no load (PBS's WARS), with ordered or independent
channels (``--channels``) and one, random or token-aware coordinators
(``--coordinators``): P(stale) of a read started t after commit for each t of
--t-grid (``forkjoin_sim.staleness.channels``), or, with ``--session``, P(a
session guarantee is violated) (``forkjoin_sim.staleness.sessions``).
"""

from __future__ import annotations

import argparse
import math

from forkjoin_sim import checks as options
from forkjoin_cli import types
from forkjoin_cli._progress import progress_bar
from forkjoin_cli.arguments import SEED_HELP, refuse_unused_write_threads
from forkjoin_sim.errors import ConfigError, percentile_label
from forkjoin_sim.files.io import json_text, strict_json

#: Operations per closed-loop client a run needs at least (each client's first
#: operations start from an empty system).
CLIENT_OPERATIONS = 10
#: Latency percentiles reported when --percentiles is not given.
DEFAULT_PERCENTILES = [50.0, 99.0, 99.9]
#: k of k-staleness reported when --versions is not given.
DEFAULT_VERSIONS = [1, 2, 3]
#: Bytes a run keeps per operation and replica (step times and ends, stations,
#: draws, states, plus slack for the per-pair arrays); a session doubles it.
BYTES_PER_TASK = 250


#: What each key of ``StalenessResult.summary()`` holds (the JSON keys).
JSON_KEYS = {
    "replicas": "N, replicas of every key (every node of the group)",
    "keys": "keys the group holds (each operation is for one of them)",
    "zipf": "key popularity exponent (0: uniform)",
    "read_quorum": "R, replies a read waits for",
    "write_quorum": "W, acknowledgements a write waits for",
    "rate": "operations per unit time (open Poisson; null for a closed loop)",
    "write_share": "fraction of operations that are writes",
    "structure": "shared (one FIFO queue per replica) or stages (read and mutation)",
    "work_per_replica": "service work a replica receives per unit time",
    "channels": "independent (every message delay its own draw) or fifo (each ordered "
                "pair of nodes one connection delivering in order)",
    "coordinators": "one (the last node for every operation), random (any node per "
                    "operation) or token-aware (a replica per operation)",
    "nodes": "nodes of the cluster (--nodes; default replicas + 1 for one "
             "coordinator, else replicas)",
    "utilisation": "busy fraction per thread of the busiest stage of any replica (measured)",
    "throughput": "operations issued per unit time after warm-up (measured)",
    "reads": "measured reads (after warm-up, with a committed version before them)",
    "writes": "measured writes",
    "stale, stale_low, stale_high": "P(read older than the latest commit before it) "
                                    "and its 95% interval (Wilson's, widened by the "
                                    "correlation of successive reads under load)",
    "visibility": "t-visibility rows: t_low, t_high (bin of time since that commit), "
                  "reads, consistent, probability, low, high (95%, as stale's)",
    "k_staleness": "rows k, probability (read among the k latest committed versions), "
                   "low, high",
    "latency": "rows percentile, read, read_low, read_high, write, write_low, "
               "write_high (read: R-th reply - issue; write: commit - issue)",
    "warnings": "doubts about the run (empty if none): the convergence checks of "
                "simulate on the measured latencies in issue order (batch means "
                "lag-1 autocorrelation, too few batches) and the operations a +-1% "
                "mean interval would need; a run too short for the load of its "
                "busiest stage (biased low), or a heavy-tailed service law, as "
                "simulate says them; when present, every interval here "
                "(latency and staleness) is too narrow",
}


#: The JSON keys of the no-load run (no --rate, no --clients), one object per (R, W).
NO_LOAD_KEYS = {
    "replicas": "N, replicas of the key",
    "read_quorum, write_quorum": "R and W",
    "read_level, write_level": "Cassandra's names of R and W (e.g. TWO/QUORUM; - if none)",
    "channels": "independent (every message delay its own draw, WARS) or fifo (each "
                "ordered pair of nodes one connection delivering in order)",
    "coordinators": "one (the same node for every operation), random (any node per "
                    "operation) or token-aware (a replica per operation)",
    "nodes": "nodes of the cluster (--nodes; default replicas + 1 for one "
             "coordinator, so it holds no replica, else replicas)",
    "trials": "(write, read) pairs per time t",
    "stale, stale_low, stale_high": "P(a read started at commit returns the old "
                                    "version) and its 95% Wilson interval",
    "visibility": "rows t (read start after commit), stale (P(old version)), low, "
                  "high (95% Wilson)",
    "latency": "rows percentile, read, write (read: R-th reply - start; write: "
               "commit - start)",
}
#: The JSON keys of --session, one object per (R, W).
SESSION_KEYS = {
    "replicas, read_quorum, write_quorum, read_level, write_level, channels, "
    "coordinators, nodes": "as without load",
    "session": "read-your-writes (a read --session-gap after the client's own write "
               "returns sees it?) or monotonic-reads (a read --session-gap after "
               "another client's write starts, then a second read --session-think "
               "after the first returns: new then old?)",
    "sessions, violations": "sessions simulated, and those violating the guarantee",
    "probability, low, high": "P(violated) and its 95% Wilson interval",
    "by_gap": "rows gap_low, gap_high (bins of --t-grid over the gap; null: open), "
              "sessions, violations, probability, low, high",
}
#: The JSON keys of --session under load (with --rate or --clients), one object per
#: (rate, R, W).
LOAD_SESSION_KEYS = {
    "replicas, read_quorum, write_quorum, read_level, write_level, channels, "
    "coordinators, nodes, sessions, violations, probability, low, high":
        "as --session without load",
    "session": "read-your-writes (each write followed by a read of its key by the same "
               "client, --session-gap after the write returns: does it see the write?) "
               "or monotonic-reads (each read followed by a second, --session-think "
               "after the first returns: older than the first?)",
    "by_gap": "rows as without load, binned by that pause",
    "rate, throughput, utilisation, write_share, keys, zipf, structure":
        "as the run under load (a session counts as two operations)",
    "warnings": "as the run under load (every read, a session's second ones too, "
                "in issue order)",
}


def _epilog() -> str:
    def lines(table):
        return "\n".join(f"  {key}: {text}" for key, text in table.items())

    return ("--json prints (and --out FILE.json writes) a list with one object per "
            "(rate, R, W):\n" + lines(JSON_KEYS) + "\n--out FILE.csv writes one row "
            "per (rate, R, W) with these columns flattened: visible_T, visible_T_low, "
            "visible_T_high (bin starting at T), k_K(_low/_high), "
            "read_pP/write_pP(_low/_high).\n\nWithout load (no --rate, no --clients) "
            "one object per (R, W):\n" + lines(NO_LOAD_KEYS) + "\n\nWith --session, "
            "one object per (R, W):\n" + lines(SESSION_KEYS) + "\n\nWith --session and "
            "load, one object per (rate, R, W):\n" + lines(LOAD_SESSION_KEYS)
            + "\nWithout load and with --session, --out FILE.csv writes one row per "
            "(rate,) R, W without the nested rows (the t-visibility of a run without "
            "load, by_gap): --out FILE.json keeps them; --figure plots P(stale) or "
            "P(violated) against the time between write and read.")


def _law(spec: str, what: str, delay: bool = False):
    from forkjoin_sim.laws.service import parse_service

    if spec.strip().lower() == "none":
        return None
    try:
        return parse_service(spec, delay=delay)
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc}") from None


def _think(spec: str):
    """``--think``: a law spec, or a bare mean Z (an exponential think time of mean Z,
    as ``--think Z`` in simulate, mix and cassandra simulate)."""
    from forkjoin_sim.checks import plain_float
    from forkjoin_sim.laws.service import parse_service

    name, colon, value = spec.strip().partition(":")
    if colon and name.strip().lower() in ("det", "deterministic"):
        # a fixed think time: deterministic with that mean (a law spec's
        # deterministic takes none of its own)
        try:
            fixed = plain_float(value)
        except ValueError:
            fixed = math.nan
        if not 0 < fixed < math.inf:
            raise ConfigError(f"--think {spec}: give a fixed think time > 0, e.g. "
                              "deterministic:2")
        return parse_service("deterministic", mean=fixed)
    try:
        mean = plain_float(spec)
    except ValueError:
        return _law(spec, "--think")
    if not (mean >= 0 and mean < float("inf")):
        raise ConfigError(f"--think {spec}: give a mean think time >= 0 or a law spec "
                          "such as exp:2")
    return None if mean == 0 else parse_service("exp", mean=mean)


def _delays(args):
    from forkjoin_sim.staleness.queueing import exponential_delays
    from forkjoin_sim.staleness.wars import MessageLaws

    if args.profile:
        from forkjoin_sim.staleness.profiles import profile

        return profile(args.profile)
    default = exponential_delays(0.5)
    laws = []
    for role, spec, option in (("write", args.delay_w, "--delay-w"),
                               ("ack", args.delay_a, "--delay-a"),
                               ("read", args.delay_r, "--delay-r"),
                               ("response", args.delay_s, "--delay-s")):
        laws.append(getattr(default, role) if spec is None
                    else _law(spec, option, delay=True))
        if laws[-1] is None:
            raise ConfigError(f"{option} none: message delays cannot be absent; give a "
                              "law such as exp:0.5")
    return MessageLaws(*laws)


def keys_from_args(args) -> list:
    """One ``ReplicatedKey`` per rate of ``--rate``, checked (stability included)."""
    from forkjoin_sim.nodes import SharedQueue, Stages
    from forkjoin_sim.staleness.queueing import ReplicatedKey

    node = (Stages(args.read_threads, args.write_threads) if args.structure == "stages"
            else SharedQueue(args.read_threads))
    read_service = _law(args.read_service, "--read-service")
    write_service = _law(args.write_service, "--write-service")
    delays = _delays(args)
    if (args.rate is None) == (args.clients is None):
        raise ConfigError("give --rate (open loop, operations per unit time) or "
                          "--clients N (closed loop): one of them, not both"
                          if args.rate is not None else
                          "give --rate (open loop, operations per unit time) or "
                          "--clients N (closed loop)")
    if args.think is not None and args.clients is None:
        raise ConfigError("--think describes closed-loop clients; add --clients N")
    rates = [None] if args.rate is None else args.rate
    return [ReplicatedKey(args.replicas, rate, args.write_share, node=node,
                          read_service=read_service, write_service=write_service,
                          delays=delays, keys=args.keys, zipf=args.zipf,
                          channels=args.channels,
                          coordinators=args.coordinators or "one", nodes=args.nodes)
            for rate in rates]


def pairs_from_args(args) -> list[tuple[int, int]]:
    """The (R, W) pairs asked for, each checked against 1..N."""
    n = args.replicas
    if args.all_pairs:
        if args.read_quorum is not None or args.write_quorum is not None:
            raise ConfigError("give --all-pairs or --read-quorum/--write-quorum, not both")
        return [(r, w) for r in range(1, n + 1) for w in range(1, n + 1)]
    if args.read_quorum is None or args.write_quorum is None:
        raise ConfigError("give --read-quorum R and --write-quorum W (or --all-pairs)")
    for label, value in (("read", args.read_quorum), ("write", args.write_quorum)):
        if not 1 <= value <= n:
            raise ConfigError(f"--{label}-quorum {value} is outside 1..N={n}; use "
                              f"1 <= {label[0].upper()} <= {n}")
    return [(args.read_quorum, args.write_quorum)]


def flat_row(summary: dict) -> dict:
    """A summary dict flattened into one CSV row."""
    row = {k: v for k, v in summary.items()
           if k not in ("visibility", "k_staleness", "latency", "warnings")}
    if "warnings" in summary:
        row["warnings"] = "; ".join(summary["warnings"])
    for bin_ in summary["visibility"]:
        name = f"visible_{bin_['t_low']:g}"
        row[name], row[f"{name}_low"], row[f"{name}_high"] = (
            bin_["probability"], bin_["low"], bin_["high"])
        row[f"{name}_reads"] = bin_["reads"]
    for item in summary["k_staleness"]:
        name = f"k_{item['k']}"
        row[name], row[f"{name}_low"], row[f"{name}_high"] = (
            item["probability"], item["low"], item["high"])
    for item in summary["latency"]:
        for kind in ("read", "write"):
            name = f"{kind}_{percentile_label(item['percentile'])}"
            row[name] = item[kind]
            row[f"{name}_low"], row[f"{name}_high"] = item[f"{kind}_low"], item[f"{kind}_high"]
    return row


def plot_visibility(summaries: list[dict], path) -> None:
    """P(consistent) against time after commit, one curve per (R, W) and rate, in
    the style of PBS's t-visibility figures."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from forkjoin_sim.files.io import atomic_save

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    rates = sorted({s["rate"] for s in summaries})
    pairs = sorted({(s["read_quorum"], s["write_quorum"]) for s in summaries})
    for s in summaries:
        bins = [b for b in s["visibility"] if b["reads"] > 0]
        mids = [b["t_low"] if b["t_high"] is None else (b["t_low"] + b["t_high"]) / 2
                for b in bins]
        label = f"R={s['read_quorum']}, W={s['write_quorum']}"
        if len(rates) > 1:
            label += f", {s['rate']:g} ops/unit (util {s['utilisation']:.2f})"
        colour = f"C{pairs.index((s['read_quorum'], s['write_quorum'])) % 10}"
        style = ("-", "--", ":", "-.")[rates.index(s["rate"]) % 4]
        ax.plot(mids, [b["probability"] for b in bins], "o" + style, color=colour, ms=3,
                label=label)
        ax.fill_between(mids, [b["low"] for b in bins], [b["high"] for b in bins],
                        color=colour, alpha=0.2, lw=0)
    first = summaries[0]
    ax.set_xlabel("t after commit (time unit of the laws, ms for Cassandra); "
                  "points at bin centres")
    ax.set_ylabel("P(consistent)")
    ax.set_title(f"N={first['replicas']}, {first['structure']}, write share "
                 f"{first['write_share']:g}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    atomic_save(path, fig.savefig, dpi=130)
    plt.close(fig)


def _write(summaries: list[dict], path) -> None:
    import pandas as pd

    from forkjoin_sim.files.io import atomic_write

    if str(path).lower().endswith(".json"):
        with atomic_write(path) as handle:
            handle.write(json_text(summaries, indent=1))
    else:
        with atomic_write(path, newline="") as handle:
            pd.DataFrame([flat_row(s) for s in summaries]).to_csv(handle, index=False)


#: What a run under load asks more of, as the command's option names it.
_MORE = "operations (--jobs)"


def _cmd_staleness(args) -> int:
    from forkjoin_sim.staleness.queueing import (ClosedLoop, Session, run_notes,
                                                 simulate_closed, simulate_queues,
                                                 simulate_sessions)
    from sizing.staleness_planning import run_doubts

    _check_options(args)
    if args.rate is None and args.clients is None:
        return _cmd_no_load(args)
    _check_load_options(args)
    session = None
    if args.session is not None:
        option, text = (("--session-gap", args.session_gap)
                        if args.session == "read-your-writes"
                        else ("--session-think", args.session_think))
        other = "--session-think" if option == "--session-gap" else "--session-gap"
        if (args.session_think if other == "--session-think" else args.session_gap) \
                is not None:
            raise ConfigError(f"under load the pause of --session {args.session} is "
                              f"{option} (after the first operation returns); leave out "
                              f"{other}")
        session = Session(args.session, _gap(text, option))
    else:
        for given, option in ((args.session_gap is not None, "--session-gap"),
                              (args.session_think is not None, "--session-think")):
            if given:
                raise ConfigError(f"{option} is a pause of --session; add --session "
                                  "read-your-writes|monotonic-reads, or leave out "
                                  f"{option}")
    if args.nodes is not None and args.nodes < args.replicas:
        raise ConfigError(f"--nodes {args.nodes} is below --replicas {args.replicas}; the "
                          f"key's replicas are nodes of the cluster: use --nodes >= "
                          f"{args.replicas}")
    pairs = pairs_from_args(args)
    keys = keys_from_args(args)
    if args.out is not None:
        options.check_output_file(args.out, "--out", suffixes=(".csv", ".json"))
    if args.figure is not None:
        options.check_output_file(args.figure, "--figure", suffixes=(".png", ".pdf",
                                                                     ".svg"))
    options.check_memory(float(args.jobs) * args.replicas * BYTES_PER_TASK
                         * (2 if session else 1), f"--jobs {args.jobs:,}",
                         "use fewer operations")
    loop = None
    if args.clients is not None:
        if args.jobs < CLIENT_OPERATIONS * args.clients:
            raise ConfigError(f"--clients {args.clients:,} with --jobs {args.jobs:,}: each "
                              f"client would issue fewer than {CLIENT_OPERATIONS} "
                              "operations, too few to reach a steady state; give --jobs "
                              f">= {CLIENT_OPERATIONS * args.clients:,} or fewer clients")

        think = None if args.think is None else _think(args.think)
        loop = ClosedLoop(args.clients, think)
    for key in keys:
        key.check_run(args.jobs)
    summaries, needs = [], []
    with progress_bar(len(keys) * len(pairs)) as bar:
        for key in keys:
            if session is not None:
                for r, w in pairs:
                    run = simulate_sessions(key, r, w, session, loop, args.jobs,
                                            args.seed, args.warmup)
                    summary = load_session_summary(run, r, w, args.t_grid, loop)
                    notes, need = run_doubts(_reads_in_issue_order(run, r),
                                             run.outcome(r, w).write_latency,
                                             float(run.utilisation.max()), args.jobs)
                    notes = run_notes(key, args.jobs, session, _MORE) + notes
                    summaries.append({**summary, "warnings": notes})
                    needs.append(need)
                    bar.update()
                continue
            if loop is None:
                bar.set_description(f"staleness: simulating {key.rate:g} ops/t")
                run = simulate_queues(key, args.jobs, args.seed, args.warmup)
                bar.set_description("staleness")
                results = (run.outcome(r, w) for r, w in pairs)
            else:
                results = (simulate_closed(key, r, w, loop, args.jobs, args.seed,
                                           args.warmup) for r, w in pairs)
            for result in results:
                notes, need = run_doubts(result.read_latency, result.write_latency,
                                         float(result.utilisation.max()), args.jobs)
                notes = run_notes(key, args.jobs, unit=_MORE) + notes
                summaries.append({**result.summary(args.t_grid, args.versions,
                                                   args.percentiles),
                                  "warnings": notes})
                needs.append(need)
                bar.update()
    summaries = strict_json(summaries)  # NaN as None, as the report and files expect
    _warn(summaries, needs, args)
    if session is not None:
        if args.out:
            _write_flat(summaries, args.out)
        if args.figure:
            plot_violations(summaries, args.figure)
        print(json_text(summaries) if args.json else session_report(summaries))
        return 0
    if args.out:
        _write(summaries, args.out)
    if args.figure:
        plot_visibility(summaries, args.figure)
    if args.json:
        print(json_text(summaries))
    else:
        print(report(summaries))
    return 0


def load_session_summary(run, read_quorum: int, write_quorum: int, edges, loop) -> dict:
    """``LOAD_SESSION_KEYS`` of one session run under load."""
    staleness = run.outcome(read_quorum, write_quorum)
    key = run.key
    return {**session_summary(run.sessions(read_quorum, write_quorum), edges),
            "rate": key.rate, "throughput": float(staleness.throughput),
            "utilisation": float(staleness.utilisation.max()),
            "write_share": key.write_share, "keys": key.keys, "zipf": key.zipf,
            "structure": key.structure}


#: Options of the run under load and their defaults; without load a value other
#: than the default would do nothing, so it is refused.
_LOAD_ONLY = {"keys": 1, "zipf": 0.0, "write_share": 0.5, "structure": "stages",
              "read_threads": 1, "write_threads": None, "read_service": "exp",
              "write_service": "exp", "warmup": 0.1, "versions": None, "think": None}


def _check_options(args) -> None:
    """Refuse options that would do nothing in any mode, before any work; fill in
    --percentiles."""
    if args.profile is not None:
        given = [f"--delay-{role}" for role in "wars"
                 if getattr(args, f"delay_{role}") is not None]
        if given:
            raise ConfigError(f"--profile {args.profile} sets all four message delays, "
                              f"so {', '.join(given)} would do nothing; leave "
                              f"{'it' if len(given) == 1 else 'them'} out, or leave out "
                              "--profile and give every --delay-* yourself")
    if args.session is not None:
        given = [f"--{name}" for name in ("versions", "percentiles")
                 if getattr(args, name) is not None]
        if given:
            raise ConfigError(f"--session measures P(the guarantee is violated), not "
                              f"k-staleness or latency percentiles, so {', '.join(given)} "
                              f"would do nothing; leave "
                              f"{'it' if len(given) == 1 else 'them'} out, or leave out "
                              "--session")
    if args.percentiles is None:
        args.percentiles = list(DEFAULT_PERCENTILES)


#: Fewest expected operations of the rarer kind (reads or writes) a run under load
#: is started with.
RAREST_OPERATIONS = 10


def _check_load_options(args) -> None:
    """Refuse options of the run under load that would do nothing or measure
    nothing, before any work; fill in the defaults left unset to tell them apart."""
    if args.write_share in (0, 1):
        from sizing.staleness_planning import needs_reads_and_writes

        raise ConfigError(needs_reads_and_writes(
            "--write-share", args.write_share,
            otherwise="use forkjoin-sim plan-consistency"))
    from forkjoin_sim.simulation import MOST_JOBS  # the longest run a message proposes

    rarer = min(args.write_share, 1 - args.write_share)
    if args.jobs * rarer < RAREST_OPERATIONS:
        kind = "writes" if args.write_share < 0.5 else "reads"
        needed = RAREST_OPERATIONS / rarer
        fix = (f"give --jobs {math.ceil(needed):,} or more, or " if needed <= MOST_JOBS
               else "give ")
        raise ConfigError(f"--write-share {args.write_share:g} with --jobs {args.jobs:,} "
                          f"gives about {args.jobs * rarer:.3g} {kind}, too few to "
                          f"measure staleness; {fix}a --write-share further from 0 "
                          "and 1")
    refuse_unused_write_threads(args)
    if args.keys == 1 and args.zipf != 0:
        raise ConfigError(f"--zipf {args.zipf:g} sets how the keys' popularity differs, "
                          "and with --keys 1 there is one key, so it would do nothing; "
                          "add --keys K (e.g. --keys 1000) or leave out --zipf")
    if args.write_threads is None:
        args.write_threads = 1
    if args.versions is None:
        args.versions = list(DEFAULT_VERSIONS)


def _reads_in_issue_order(run, read_quorum: int):
    """The latencies of every read of a session run after its warm-up (a session's
    second reads too, each its R-th reply), in issue order: what its latency warnings
    judge (its ``outcome`` keeps only reads with a commit before them)."""
    import numpy as np

    ops = run.operations
    issue = ops.issue[~ops.is_write]
    latency = (ops.returned(read_quorum)[1] - issue)[np.argsort(issue, kind="stable")]
    return latency[int(run.warmup * latency.size):]


def _warn(summaries: list[dict], needs: list, args) -> None:
    """One warning line per rate (or closed loop) whose pairs doubt their run."""
    import warnings

    from sizing.staleness_planning import SATURATION_START

    groups: dict = {}
    for summary, need in zip(summaries, needs):
        groups.setdefault(summary["rate"], []).append((summary, need))
    for rate, items in groups.items():
        doubtful = [(s, need) for s, need in items if s["warnings"]]
        if not doubtful:
            continue
        first = doubtful[0][0]
        pace = (f"{rate:g} ops/t" if rate is not None
                else f"--clients {args.clients}")
        busiest = max(s["utilisation"] for s, _ in items)
        longest = max((need for _, need in doubtful if need is not None), default=None)
        more = ("" if longest is None or longest <= args.jobs else
                f"; about --jobs {longest:,} would give a +-1% mean interval")
        # near saturation is said once, whatever else the first pair doubts
        saturated = next((note for s, _ in doubtful for note in s["warnings"]
                          if note.startswith(SATURATION_START)), None)
        said = [note for note in first["warnings"] if note != saturated][:1]
        doubts = (f"{len(doubtful)} of {len(items)} (R, W) pair(s) doubt the run, e.g. "
                  f"R={first['read_quorum']}, W={first['write_quorum']}: {said[0]}; so "
                  f"the intervals printed are too narrow{more}" if said else "")
        warnings.warn(f"at {pace} (utilisation {busiest:.2f}) "
                      + "; ".join(part for part in (doubts, saturated) if part),
                      UserWarning, stacklevel=1)


def _cmd_no_load(args) -> int:
    """WARS without load, or sessions (``--session``): one object per (R, W)."""
    from forkjoin_sim.staleness.sessions import simulate_session

    for name, default in _LOAD_ONLY.items():
        if getattr(args, name) != default:
            option = "--" + name.replace("_", "-")
            raise ConfigError(f"{option} describes the run under load; add --rate or "
                              f"--clients, or leave out {option}")
    if args.session_gap is not None and args.session is None:
        raise ConfigError("--session-gap is the time between write and read of "
                          "--session; add --session read-your-writes|monotonic-reads")
    if args.session_think is not None and args.session != "monotonic-reads":
        raise ConfigError("--session-think is the pause between the two reads of "
                          "--session monotonic-reads; add it, or leave out "
                          "--session-think")
    pairs = pairs_from_args(args)
    laws = _delays(args)
    coordinators = args.coordinators or "one"
    if args.out is not None:
        options.check_output_file(args.out, "--out", suffixes=(".csv", ".json"))
    if args.figure is not None:
        options.check_output_file(args.figure, "--figure", suffixes=(".png", ".pdf",
                                                                     ".svg"))
    options.check_memory(float(args.jobs) * args.replicas * BYTES_PER_TASK * 2,
                         f"--jobs {args.jobs:,}", "use fewer trials")
    if args.nodes is not None and args.nodes < args.replicas:
        raise ConfigError(f"--nodes {args.nodes} is below --replicas {args.replicas}; the "
                          f"key's replicas are nodes of the cluster: use --nodes >= "
                          f"{args.replicas}")
    common = dict(channels=args.channels, coordinators=coordinators, trials=args.jobs,
                  seed=args.seed, nodes=args.nodes)
    summaries = []
    with progress_bar(len(pairs)) as bar:
        for r, w in pairs:
            if args.session:
                more = ({} if args.session_think is None else
                        {"think": _gap(args.session_think, "--session-think")})
                result = simulate_session(args.session, laws, args.replicas, r, w,
                                          gap=_gap(args.session_gap), **more, **common)
                summaries.append(session_summary(result, args.t_grid))
            else:
                summaries.append(no_load_summary(laws, args.replicas, r, w, args.t_grid,
                                                 args.percentiles, common))
            bar.update()
    summaries = strict_json(summaries)
    if args.out:
        _write_flat(summaries, args.out)
    if args.figure:
        plot_violations(summaries, args.figure)
    if args.json:
        print(json_text(summaries))
    else:
        print(session_report(summaries) if args.session else no_load_report(summaries))
    return 0


def _gap(text, option: str = "--session-gap"):
    """A time option of --session: a number (constant) or a law spec; 0 if absent."""
    if text is None:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        return _law(text, option)
    if not (math.isfinite(value) and value >= 0):
        raise ConfigError(f"{option} {text!r} must be a time >= 0 or a law such as "
                          "exp:2")
    return value


def no_load_summary(laws, replicas: int, read_quorum: int, write_quorum: int,
                    times, percentiles, common: dict) -> dict:
    """``NO_LOAD_KEYS`` of one (R, W): one ``simulate_wars_ordered`` run per time t
    after commit, all on the same seed (common random numbers)."""
    from forkjoin_sim.staleness.channels import simulate_wars_ordered
    from forkjoin_sim.staleness.sessions import level_names

    rows, first = [], None
    for t in times:
        run = simulate_wars_ordered(laws, replicas, read_quorum, write_quorum,
                                    read_delays=float(t), after="commit", **common)
        stale = run.summary().set_index("event").loc["stale"]
        rows.append({"t": float(t), "stale": float(stale.probability),
                     "low": float(stale.low), "high": float(stale.high)})
        first = first or run
    at_commit = (rows[0] if times[0] == 0 else
                 _stale_row(simulate_wars_ordered(laws, replicas, read_quorum,
                                                  write_quorum, after="commit", **common)))
    latency = first.latency_quantiles(percentiles)
    return {"replicas": replicas, "read_quorum": read_quorum,
            "write_quorum": write_quorum,
            "read_level": level_names(read_quorum, replicas),
            "write_level": level_names(write_quorum, replicas),
            "channels": first.channels, "coordinators": first.coordinators,
            "nodes": first.nodes, "trials": first.trials, "stale": at_commit["stale"],
            "stale_low": at_commit["low"], "stale_high": at_commit["high"],
            "visibility": rows, "latency": latency.to_dict("records")}


def _stale_row(run) -> dict:
    stale = run.summary().set_index("event").loc["stale"]
    return {"stale": float(stale.probability), "low": float(stale.low),
            "high": float(stale.high)}


def session_summary(result, edges) -> dict:
    """``SESSION_KEYS`` of one ``SessionResult``."""
    from forkjoin_sim.staleness.sessions import level_names

    return {"replicas": result.replicas, "read_quorum": result.read_quorum,
            "write_quorum": result.write_quorum,
            "read_level": level_names(result.read_quorum, result.replicas),
            "write_level": level_names(result.write_quorum, result.replicas),
            "channels": result.channels, "coordinators": result.coordinators,
            "nodes": result.nodes, "session": result.guarantee, **result.summary(),
            "by_gap": result.by_gap(edges).to_dict("records")}


def _write_flat(summaries: list[dict], path) -> None:
    """JSON as printed, or CSV with one row per (R, W) without the nested rows."""
    import pandas as pd

    from forkjoin_sim.files.io import atomic_write

    if str(path).lower().endswith(".json"):
        with atomic_write(path) as handle:
            handle.write(json_text(summaries, indent=1))
        return
    rows = [{k: "; ".join(v) if k == "warnings" else v for k, v in s.items()
             if k == "warnings" or not isinstance(v, list)} for s in summaries]
    with atomic_write(path, newline="") as handle:
        pd.DataFrame(rows).to_csv(handle, index=False)


def plot_violations(summaries: list[dict], path) -> None:
    """P(stale) (no load) or P(violated) (sessions) against the time between write
    and read, one curve per (R, W), with 95% Wilson bands."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from forkjoin_sim.files.io import atomic_save

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    session = "session" in summaries[0]
    for j, s in enumerate(summaries):
        if session:
            rows = [b for b in s["by_gap"] if b["sessions"]]
            xs = [b["gap_low"] if b["gap_high"] is None
                  else (b["gap_low"] + b["gap_high"]) / 2 for b in rows]
            ys = [b["probability"] for b in rows]
        else:
            rows = s["visibility"]
            xs, ys = [b["t"] for b in rows], [b["stale"] for b in rows]
        label = (f"R={s['read_quorum']} ({s['read_level']}), W={s['write_quorum']} "
                 f"({s['write_level']})")
        ax.plot(xs, ys, "o-", color=f"C{j % 10}", ms=3, label=label)
        ax.fill_between(xs, [b["low"] for b in rows], [b["high"] for b in rows],
                        color=f"C{j % 10}", alpha=0.2, lw=0)
    first = summaries[0]
    if session:
        ax.set_xlabel("time between write and read (bin centres; "
                      + ("after the write returns)" if first["session"] ==
                         "read-your-writes" else "after the write starts)"))
        ax.set_ylabel(f"P({first['session']} violated)")
    else:
        ax.set_xlabel("read start after commit (time unit of the laws)")
        ax.set_ylabel("P(stale read)")
    ax.set_title(f"N={first['replicas']}, {first['channels']} channels, "
                 f"coordinators {first['coordinators']}, no load", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    atomic_save(path, fig.savefig, dpi=130)
    plt.close(fig)


def no_load_report(summaries: list[dict]) -> str:
    """One line per (R, W): P(stale) at commit, with its interval, and at each t."""
    times = [row["t"] for row in summaries[0]["visibility"]]
    lines = [f"{'R':>2} {'W':>2} {'read level':>12} {'write level':>12} "
             f"{'P(stale) at commit':>26} "
             + " ".join(f"{'t=' + format(t, 'g'):>8}" for t in times)]
    for s in summaries:
        stale = f"{s['stale']:.4f} [{s['stale_low']:.4f},{s['stale_high']:.4f}]"
        lines.append(f"{s['read_quorum']:>2} {s['write_quorum']:>2} "
                     f"{s['read_level']:>12} {s['write_level']:>12} {stale:>26} "
                     + " ".join(f"{row['stale']:8.4f}" for row in s["visibility"]))
    first = summaries[0]
    lines.append(f"(P(stale) of a read started t after commit; {first['channels']} "
                 f"channels, coordinators {first['coordinators']}, "
                 f"{first['trials']:,} trials)")
    return "\n".join(lines)


def session_report(summaries: list[dict]) -> str:
    """One line per (R, W): P(guarantee violated) with its interval."""
    lines = [f"{'R':>2} {'W':>2} {'read level':>12} {'write level':>12} "
             f"{'P(' + summaries[0]['session'] + ' violated)':>36}"]
    for s in summaries:
        cell = (f"{s['probability']:.4f} [{s['low']:.4f},{s['high']:.4f}]"
                if s["probability"] is not None else "n/a")
        lines.append(f"{s['read_quorum']:>2} {s['write_quorum']:>2} "
                     f"{s['read_level']:>12} {s['write_level']:>12} {cell:>36}")
    first = summaries[0]
    lines.append(f"({first['channels']} channels, coordinators "
                 f"{first['coordinators']}, {first['sessions']:,} sessions)")
    return "\n".join(lines)


def report(summaries: list[dict]) -> str:
    """A short human-readable table: one line per (rate, R, W), with the latencies at
    the highest percentile asked (``--percentiles``; all of them are in JSON and CSV)."""
    from forkjoin_sim.errors import percentile_label

    asked = [row["percentile"] for row in summaries[0]["latency"]] if summaries else []
    shown = 99.0 if 99.0 in asked or not asked else max(asked)
    label = percentile_label(shown)
    lines = [f"{'ops/t':>7} {'util':>5} {'R':>2} {'W':>2} {'P(stale)':>18} "
             f"{'P(cons|first bin)':>18} {'read ' + label:>9} {'write ' + label:>9}"]
    for s in summaries:
        first = s["visibility"][0]
        p99 = {row["percentile"]: row for row in s["latency"]}.get(shown)
        read99 = p99["read"] if p99 else math.nan
        write99 = p99["write"] if p99 else math.nan
        stale = (f"{s['stale']:.4f} [{s['stale_low']:.4f},{s['stale_high']:.4f}]"
                 if s["stale"] is not None else "n/a")
        cons = f"{first['probability']:.3f}" if first["probability"] is not None else "n/a"
        pace = s["rate"] if s["rate"] is not None else s["throughput"]
        lines.append(f"{_num(pace):>7} {s['utilisation']:5.2f} {s['read_quorum']:>2} "
                     f"{s['write_quorum']:>2} {stale:>18} {cons:>18} "
                     f"{_num(read99):>9} {_num(write99):>9}")
    return "\n".join(lines)


def _num(value) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.4g}"


def _grid(text: str) -> list[float]:
    values = types.real_list(0.0, what="--t-grid")(text)
    if any(b <= a for a, b in zip(values, values[1:])):
        raise argparse.ArgumentTypeError(f"--t-grid {text!r} must increase, e.g. "
                                         "0,1,2,5,10")
    return values


def _percentiles(text: str) -> list[float]:
    """--percentiles: each in [1, 100), the one rule of every mode (p100 is the run's
    largest latency, which grows with --jobs rather than estimate anything)."""
    values = types.percentile_list("--percentiles")(text)
    if 100 in values:
        raise argparse.ArgumentTypeError(
            f"--percentiles {text!r}: 100 would be the run's largest latency, which "
            "grows with --jobs; give percentiles below 100, e.g. 50,99,99.9")
    return values


def register(subparsers) -> tuple[type[BaseException], ...]:
    """Add ``staleness``."""
    p = subparsers.add_parser(
        "staleness", help="staleness (t-visibility, k-staleness) and latency of "
        "partial quorums under load", description=__doc__.split("\n\n")[1],
        epilog=_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--replicas", type=types.whole(1, 64, "--replicas"), required=True,
                   help="N, replicas of every key (every node holds one)")
    p.add_argument("--keys", type=types.whole(1, 10_000_000, "--keys"), default=1,
                   help="keys sharing the N replicas (default 1, the worst case: "
                        "every write makes every later read's target move)")
    p.add_argument("--zipf", type=types.real(0.0, 10.0, what="--zipf"), default=0.0,
                   help="key popularity over --keys K > 1: key j drawn with "
                        "probability ~ j**-S (default 0, uniform; YCSB zipfian is 0.99)")
    p.add_argument("--read-quorum", type=types.whole(what="--read-quorum"),
                   help="R: replies a read waits for")
    p.add_argument("--write-quorum", type=types.whole(what="--write-quorum"),
                   help="W: acknowledgements a write waits for")
    p.add_argument("--all-pairs", action="store_true",
                   help="every (R, W) in 1..N (one queueing run serves them all)")
    p.add_argument("--rate", type=types.real_list(0.0, low_open=True, what="--rate"),
                   help="operations per unit time, comma-separated for several loads "
                        "(open loop); without --rate and --clients: no load (WARS)")
    p.add_argument("--clients", type=types.whole(1, 100_000, "--clients"),
                   help="closed loop: client threads, each waiting for its operation "
                        "and thinking before the next (one run per (R, W))")
    p.add_argument("--think", help="think time of --clients: a mean Z (exponential, "
                                   "as in simulate), a fixed time (deterministic:2) or "
                                   "a law spec (e.g. gamma:2); default none")
    p.add_argument("--write-share", type=types.fraction, default=0.5,
                   help="fraction of operations that are writes, strictly between 0 "
                        "and 1: staleness needs both reads and writes, so 0 and 1 are "
                        "refused (for latency alone use plan-consistency; default 0.5)")
    p.add_argument("--structure", choices=["stages", "shared"], default="stages",
                   help="separate read and mutation stages (Cassandra, default) or one "
                        "FIFO queue per replica")
    p.add_argument("--read-threads", type=types.whole(1, 4096, "--read-threads"),
                   default=1, help="threads of the read stage (of the queue, shared)")
    p.add_argument("--write-threads", type=types.whole(1, 4096, "--write-threads"),
                   help="threads of the mutation stage (stages only; default 1)")
    spec_help = ("service law spec (exp, exp:MEAN, erlang:K, lognormal:SIGMA, "
                 "pareto:ALPHA, empirical:PATH, mix:W1*SPEC1;W2*SPEC2 ...), or none")
    p.add_argument("--read-service", default="exp", help=f"read {spec_help}; default "
                   "exp (mean 1)")
    p.add_argument("--write-service", default="exp", help="write service, as above")
    for role, name in (("w", "write propagation W"), ("a", "write ack A"),
                       ("r", "read request R"), ("s", "read response S")):
        p.add_argument(f"--delay-{role}", help=f"{name} one-way delay law (default "
                       "exp:0.5)")
    p.add_argument("--channels", choices=["independent", "fifo"], default="independent",
                   help="message order between two nodes: independent delays (WARS, "
                        "default) or fifo (one ordered connection per pair of nodes)")
    p.add_argument("--coordinators", choices=["one", "random", "token-aware"],
                   help="who coordinates each operation: one node for all "
                        "(default; it holds no replica), a random node, or a "
                        "random replica (token-aware)")
    p.add_argument("--nodes", type=types.whole(1, 10_000, "--nodes"),
                   help="nodes of the cluster (default replicas + 1 for "
                        "--coordinators one, so the coordinator holds no replica, else "
                        "replicas: then random is token-aware)")
    p.add_argument("--session", choices=["read-your-writes", "monotonic-reads"],
                   help="P(the session guarantee is violated) instead of "
                        "t-visibility; under load each write (read-your-writes) or "
                        "read (monotonic-reads) is followed by a read of its key from "
                        "the same client")
    p.add_argument("--session-gap", metavar="SPEC",
                   help="time from the write's return (read-your-writes) or start "
                        "(monotonic-reads, no load only) to the read: a number or a "
                        "law spec such as exp:2 (default 0); --t-grid bins it")
    p.add_argument("--session-think", metavar="SPEC",
                   help="monotonic-reads: time from the first read's return to the "
                        "second read, a number or a law spec (default 0); --t-grid "
                        "bins it under load")
    p.add_argument("--profile", choices=["LNKD-SSD", "LNKD-DISK", "YMMR"],
                   help="PBS's fitted delays for W, A, R, S (instead of --delay-*, "
                        "which it refuses)")
    p.add_argument("--t-grid", type=_grid, default=[0, 1, 2, 5, 10],
                   help="left edges of the bins of time after commit (default "
                        "0,1,2,5,10)")
    p.add_argument("--versions", type=types.whole_list(1, 10**6, what="--versions"),
                   help="k of k-staleness (default 1,2,3; not with --session)")
    p.add_argument("--percentiles", type=_percentiles,
                   help="latency percentiles, each at least 1 and below 100 (default "
                        "50,99,99.9; not with --session)")
    p.add_argument("--jobs", type=types.count(10**9, "--jobs", low=2), default=200_000,
                   help="operations to simulate per rate (default 200000); without "
                        "load: trials per t of --t-grid, or sessions")
    p.add_argument("--warmup", type=types.real(0.0, 1.0, high_open=True,
                                                 what="--warmup"),
                   default=0.1, help="fraction of operations not measured")
    p.add_argument("--seed", type=types.seed, default=0, help=SEED_HELP)
    p.add_argument("--out", help="results file, .csv or .json (written atomically)")
    p.add_argument("--figure", help="t-visibility figure (.png, .pdf or .svg)")
    p.add_argument("--json", action="store_true", help="print one JSON list")
    p.set_defaults(handler=_cmd_staleness)
    return (ConfigError,)
