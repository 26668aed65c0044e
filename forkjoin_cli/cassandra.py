"""``forkjoin-sim cassandra``: Theorem 4 predictions, Cassandra write simulations, the
validation of one against the other (the paper's Figs. 5 and 6), and a model
calibrated from benchmark summaries (``calibrate``, ``predict --model``)."""

from __future__ import annotations

import csv
import math
import sys
from decimal import Decimal

from forkjoin_sim.cassandra import (CassandraModel, load_staged_config,
                                    policy_local_fraction, simulate_cassandra)
from forkjoin_cli.main import (_Parser, add_closed_loop_arguments, closed_loop_from_args,
                              parse_warmup)
from forkjoin_sim.errors import ConfigError, counted
from forkjoin_sim.files.io import json_text
from forkjoin_sim.checks import input_encoding, is_plain_whole, plain_float
from forkjoin_cli.types import choice_list, level_list, real, real_list, seed, whole, \
    whole_list
from forkjoin_cli.arguments import SEED_HELP
from sizing.columns import MAX_THREADS
from forkjoin_sim.laws.service import check_mean_applies, describe_service, parse_service

from validation import cassandra as experiment

POLICY_HELP = "token-aware | round-robin | remote | local-fraction:L"
#: Warn when the inputs' rounding can move a level's latency by more than this fraction.
ROUNDING_WARNING = 0.05
SPEC_HELP = ("exp:MEAN | a scipy.stats name with its shapes (e.g. lognormal:0.8, "
             "gamma:2), rescaled to the matching --*-mean | empirical:PATH")


class Written(float):
    """A number read from text, with ``half_unit``: half a unit in its last written
    digit ("1.23" -> 0.005, "12" -> 0.5, "1.5e3" -> 50), how precisely a measured
    value written that way is known."""

    half_unit: float

    def __new__(cls, text: str) -> "Written":
        value = super().__new__(cls, text)
        value.half_unit = 0.5 * 10.0 ** Decimal(text.strip()).as_tuple().exponent
        return value


def _number(text: str, what: str) -> float:
    if text is None:  # a CSV row with fewer cells than the header
        raise ConfigError(f"{what} is missing; give a number")
    try:
        value = plain_float(text)
    except ValueError:
        raise ConfigError(f"{what} {text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(f"{what} {text!r} must be a positive finite number")
    try:
        return Written(str(text))
    except (ArithmeticError, ValueError):  # float() reads forms Decimal does not
        return value


def parse_remote_basic(text: str, replicas: int) -> dict[int, float]:
    """``"1:RT1,2:RT2,..."`` as ``{1: RT1, 2: RT2, ...}``, each I in 1..``replicas``."""
    out = {}
    for part in text.split(","):
        size, sep, value = part.partition(":")
        if not sep or not is_plain_whole(size) or int(size) < 1:
            raise ConfigError(f"--remote-basic entry {part!r} must look like I:MEAN with "
                              "a whole I >= 1, e.g. --remote-basic 1:0.9,2:1.4,3:1.8")
        if int(size) > replicas:
            raise ConfigError(f"--remote-basic entry {part.strip()!r} gives RT({int(size)},"
                              f"{int(size)},{int(size)}), but RT(i,i,i) is defined for "
                              f"1 <= i <= replicas (--replicas {replicas}); leave it out")
        if int(size) in out:
            raise ConfigError(f"--remote-basic gives RT({int(size)},{int(size)},"
                              f"{int(size)}) twice; give each I once")
        out[int(size)] = _number(value.strip(), f"--remote-basic RT({size},{size},{size})")
    return out


def read_basic_csv(path: str) -> tuple[float | None, dict[int, float]]:
    """LT(1,1,1) and RT(i,i,i) from a CSV with columns kind (local/remote), size, mean.

    The ``cassandra_basic_inputs.csv`` that ``cassandra validate`` writes has these
    columns; keep the rows of one configuration only.
    """
    from forkjoin_sim.checks import check_input_file

    check_input_file(path, "--basic-csv")
    local, remote = None, {}
    with open(path, newline="", encoding=input_encoding(path)) as handle:
        lines = [(number, fields) for number, fields in
                 enumerate(csv.reader(handle), start=1) if any(f.strip() for f in fields)]
    if not lines:
        raise ConfigError(f"{path} is empty; it needs a header kind,size,mean and a row "
                          "per basic input")
    header = [name.strip() for name in lines[0][1]]
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise ConfigError(f"{path}: column {twice[0]!r} appears twice in the header; "
                          "keep one")
    if not {"kind", "size", "mean"} <= set(header) or len(lines) < 2:
        raise ConfigError(f"{path} needs columns kind, size, mean (kind local or "
                          "remote, size = i of RT(i,i,i)) and a row per basic input")
    for number, fields in lines[1:]:
        if len(fields) != len(header):
            raise ConfigError(f"{path} line {number} has {len(fields)} fields where the "
                              f"header has {len(header)}; give every row each column")
        row = dict(zip(header, (field.strip() for field in fields)))
        # names in any case, as level and operation names are
        kind, size = row["kind"].lower(), row["size"]
        mean = _number(row["mean"], f"{path} line {number}: mean of {kind} {size}")
        if kind == "local":
            if local is not None:
                raise ConfigError(f"{path} has several local rows; keep one "
                                  "configuration's rows (e.g. one level and load)")
            local = mean
        elif kind == "remote" and is_plain_whole(size) and int(size) >= 1:
            if int(size) in remote:
                raise ConfigError(f"{path} has several rows for RT({size},{size},{size});"
                                  " keep one configuration's rows")
            remote[int(size)] = mean
        else:
            raise ConfigError(f"{path} line {number}: kind={kind!r} size={size!r}; use "
                              "kind local, or kind remote with a whole size >= 1")
    return local, remote


THEOREM4_OPTIONS = ("nodes", "replicas", "local_fraction", "policy", "local_basic",
                    "remote_basic", "basic_csv")
#: Levels a ``predict --model --threads`` grid may name.
GRID_LEVELS = ("ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_ONE", "LOCAL_QUORUM")


def _cmd_predict(args) -> int:
    theorem4 = [o for o in THEOREM4_OPTIONS if getattr(args, o) is not None]
    if args.model is not None:
        # --nodes with --model asks for a cluster of that size
        theorem4 = [o for o in theorem4 if o != "nodes"]
        if theorem4:
            raise ConfigError(f"--model predicts from a calibrated model and cannot be "
                              f"combined with --{theorem4[0].replace('_', '-')}; drop "
                              "the Theorem 4 options, or drop --model for Theorem 4")
        from forkjoin_cli._calibration import cmd_predict_model

        args.seed = 0 if args.seed is None else args.seed
        return cmd_predict_model(args)
    grid = [o for o in ("threads", "consistency", "operation", "measurements", "out",
                        "figure") if getattr(args, o) is not None]
    if grid:
        raise ConfigError(f"--{grid[0]} goes with --model MODEL.toml (Theorem 4 prints "
                          "its levels: --json for JSON); for Theorem 4 give --nodes, "
                          "--replicas and --policy")
    if args.seed is not None:
        raise ConfigError("--seed goes with --model MODEL.toml (its intervals' posterior "
                          "draws); Theorem 4 is exact arithmetic on its inputs: leave it "
                          "out")
    if args.nodes is None or args.replicas is None or \
            (args.policy is None and args.local_fraction is None):
        raise ConfigError("give --nodes, --replicas and --policy or --local-fraction "
                          "(Theorem 4), or --model MODEL.toml --measurements QUERY.csv "
                          "(calibrated model)")
    if args.local_fraction is not None:
        fraction = args.local_fraction
        if not 0 <= fraction <= 1:
            raise ConfigError(f"--local-fraction {fraction} must lie in [0, 1]")
    else:
        fraction = policy_local_fraction(args.policy, args.nodes, args.replicas)
    local, remote = (read_basic_csv(args.basic_csv) if args.basic_csv
                     else (None, {}))
    # an option may supply what the CSV lacks, not overrule what it has
    for option, kind, found in (("local_basic", "local", local is not None),
                                ("remote_basic", "remote", bool(remote))):
        if getattr(args, option) is not None and found:
            raise ConfigError(f"--{option.replace('_', '-')} and the {kind} rows of "
                              f"--basic-csv both give the {kind} basic latencies; give "
                              "them in one place")
    if args.local_basic is not None:
        local = _number(args.local_basic, "--local-basic")
    if args.remote_basic is not None:
        remote = parse_remote_basic(args.remote_basic, args.replicas)
    if not remote:
        raise ConfigError("give the remote basic latencies: --remote-basic "
                          "1:RT1,2:RT2,... or --basic-csv PATH")
    if local is None and fraction > 0:
        raise ConfigError(f"with local fraction {fraction:.4g} > 0, ONE needs the local "
                          "basic latency: give --local-basic LT (or a 'local' row in "
                          "--basic-csv)")
    if args.local_basic is not None and fraction == 0:
        raise ConfigError("--local-basic does nothing with local fraction 0 (no write "
                          f"is coordinated by a replica{' under --policy ' + args.policy if args.policy else ''}); "
                          "leave it out")
    if fraction == 0:
        local = None  # a 'local' row of --basic-csv plays no part (nor its rounding)
    values = experiment.predict_levels(args.nodes, args.replicas, fraction, local, remote)
    sizes = sorted(remote)
    said = []  # the warnings, on stderr
    falling = [(i, j) for i, j in zip(sizes, sizes[1:]) if remote[j] < remote[i]]
    if falling:
        i, j = falling[0]
        # RT(j,j,j) is the mean of the slowest of j replicas: it cannot fall as j grows
        said.append(f"RT({j},{j},{j}) = {remote[j]:g} < RT({i},{i},{i}) = "
                    f"{remote[i]:g}: the slowest of more replicas cannot be faster; check "
                    "the measured basic latencies (the predictions below rest on them)")
    half_units = {i: getattr(v, "half_unit", 0.0) for i, v in remote.items()}
    half_units["LT"] = getattr(local, "half_unit", 0.0)
    bounds = experiment.rounding_bounds(args.replicas, fraction, half_units)
    inputs = [(local, half_units["LT"])] + [(v, half_units[i]) for i, v in remote.items()]
    # Warn where the sum amplifies: a level's spread is large and more than twice the
    # inputs' own relative rounding (LT = 1 written "1" is +-50% all by itself).
    own = max((h / abs(v) for v, h in inputs if v), default=0.0)
    uncertain = [f"{name} {value:.4g} +- {bounds[name]:.2g}"
                 for name, value in values.items()
                 if bounds[name] > max(ROUNDING_WARNING, 2 * own) * abs(value)]
    if uncertain:
        said.append(f"Theorem 4's alternating sums amplify the rounding of the inputs "
                    f"(each known to half a unit in its last written digit): "
                    f"{', '.join(uncertain)}; give LT(1,1,1) and RT(i,i,i) with more "
                    "digits")
    negative = [name for name, value in values.items() if value < 0]
    if negative:
        # Theorem 4's alternating sums cancel: inputs measured with few digits (or a
        # remote latency that does not grow with i) can make a level negative.
        said.append(f"Theorem 4 gives negative latencies for {', '.join(negative)}: "
                    "the alternating sum cancelled; check that RT(i,i,i) grows with i "
                    "and give the inputs with more digits")
    from forkjoin_sim.cassandra.model import consistency_quorum

    order = sorted(values, key=lambda name: consistency_quorum(name, args.replicas))
    inverted = [(low, high) for low, high in zip(order, order[1:])
                if consistency_quorum(high, args.replicas)
                > consistency_quorum(low, args.replicas) and values[high] < values[low]]
    if inverted:
        low, high = inverted[0]
        # waiting for more acknowledgements is never faster; Theorem 4 can say so when
        # its inputs are inconsistent (a local write nearly as slow as a remote one)
        said.append(f"Theorem 4 gives {high} {values[high]:.4g} below {low} "
                    f"{values[low]:.4g}: waiting for more acknowledgements cannot be "
                    "faster; the basic latencies do not fit the model (a local write "
                    "LT(1,1,1) nearly as slow as a remote one, or RT(i,i,i) not growing "
                    "with i); check them")
    for note in said:
        print(f"warning: {note}", file=sys.stderr)
    if args.json:
        # the levels alone, as scripts read them (the warnings are on stderr)
        print(json_text(values))
        return 0
    print(f"Theorem 4: {counted(args.nodes, 'node')}, {counted(args.replicas, 'replica')}, "
          f"local fraction {fraction:.4g}")
    for name, value in values.items():
        print(f"{name:<7} {value:.6g}")
    return 0


def _cmd_calibrate(args) -> int:
    from forkjoin_cli._calibration import cmd_calibrate

    return cmd_calibrate(args)


def _model(args) -> CassandraModel:
    local = parse_service(args.local_service, mean=args.local_mean or 1.0)
    remote = parse_service(args.remote_service, mean=args.remote_mean or 1.0)
    for spec, flag, mean in ((args.local_service, "--local-service", args.local_mean),
                             (args.remote_service, "--remote-service", args.remote_mean)):
        if mean is not None:
            check_mean_applies(spec, flag, flag.replace("-service", "-mean"))
    closed = closed_loop_from_args(args)
    if bool(closed) == (args.rate is not None):
        raise ConfigError("give --rate (open, Poisson writes) or --clients N (closed "
                          "loop), " + ("not both" if closed else "one of them"))
    return CassandraModel(args.nodes, args.replicas, args.consistency, args.rate,
                          local, remote, args.policy, **closed)


def _cmd_simulate_steps(args, model) -> int:
    """``cassandra simulate`` with queued work: writes as step graphs."""
    from forkjoin_cli import _steps

    if args.level != 1:
        raise ConfigError("the queued-work options describe the write path as steps; "
                          "drop --level 2")
    datacentres = _steps.datacentres_from_args(args, model.nodes)
    coordinator = {"token-aware": "replica", "round-robin": "random"}.get(
        args.policy.strip().lower())
    if coordinator is None:
        raise ConfigError(f"policy {args.policy!r} with the queued-work options; use "
                          "token-aware or round-robin")
    from forkjoin_sim.cassandra.queued import run_queued
    from forkjoin_sim.steps.builders import cassandra_jobs

    laws = _steps.step_laws(args)
    laws["replica_write"] = model.remote_service
    templates, classes, parties, durations = cassandra_jobs(
        model.nodes, model.replicas, model.quorum, laws, args.seed, args.jobs,
        writes=1.0, coordinator=coordinator, local={"replica_write": model.local_service},
        datacentres=datacentres)
    closed = model.clients is not None
    result, fields = run_queued(
        layout=_steps.layout_from_args(args, model.nodes), templates=templates,
        classes=classes, parties=parties, durations=durations, seed=args.seed,
        jobs=args.jobs, warmup=parse_warmup(args.warmup), rate=model.arrival_rate,
        clients=model.clients, think=model.think if closed else 0.0,
        think_law=model.think_law if closed else None,
        sample_every=args.sample_every, unqueued=_steps.unqueued(laws))
    result.update(nodes=model.nodes, replicas=model.replicas, quorum=model.quorum,
                  consistency=str(model.consistency), policy=model.policy,
                  local_fraction=model.local_fraction, arrival_rate=model.arrival_rate,
                  clients=model.clients, think=model.think if closed else None)
    _steps.print_result(result, fields, args)
    return 0


def _cmd_simulate(args) -> int:
    from forkjoin_cli import _steps
    from forkjoin_sim.checks import check_jobs_fit

    if _steps.wants_steps(args):
        return _cmd_simulate_steps(args, _model(args))
    if args.level == 1 and args.config is not None:
        raise ConfigError("--config describes the stages of --level 2; add --level 2 or "
                          "drop --config (with the queued-work options it holds a "
                          "[datacentres] table)")
    model = _model(args)
    if args.level == 1:
        model.check_stable(option="--rate")
    # Level 1 keeps every measured write; level 2 draws the whole run first.
    check_jobs_fit(args.jobs, "--jobs", runs=1 if args.level == 1 else 20)
    config = load_staged_config(args.config) if args.level == 2 else None
    result = simulate_cassandra(model, jobs=args.jobs, seed=args.seed, level=args.level,
                                config=config, warmup=parse_warmup(args.warmup),
                                sample_every=args.sample_every, progress=not args.json)
    print(json_text(result.to_dict()) if args.json else result.report())
    return 0


def _cmd_validate(args) -> int:
    local = parse_service(args.local_service, mean=0.2)
    remote = parse_service(args.remote_service, mean=1.0)
    config = load_staged_config(args.config)
    size = "quick" if args.quick else "full"
    levels = [int(x) for x in args.levels]
    loads = args.loads  # fractions in (0, 1): its converter checked them
    from forkjoin_sim.checks import check_output_dir

    check_output_dir(args.out, ["cassandra_validation.csv", "cassandra_basic_inputs.csv",
                                "cassandra_summary.md"]
                     + [f"cassandra_level{level}.png" for level in levels])
    tables = {}
    for level in levels:
        jobs = args.jobs or experiment.JOBS[size][level]
        tables[level] = experiment.run_validation(
            level, local, remote, jobs=jobs, loads=loads, seed=args.seed, config=config,
            progress=None if args.json else (lambda m: print(m, flush=True)))
    labels = f"local {describe_service(local)}, remote {describe_service(remote)}"
    paths = experiment.write_outputs(tables, args.out, labels)
    if args.json:
        print(json_text(paths))
    else:
        print(experiment.summary_text(
            __import__("pandas").concat([t for t, _ in tables.values()])))
        for path in paths.values():
            print(f"wrote {path}")
    return 0


def register(subparsers) -> None:
    """Add ``cassandra predict | calibrate | simulate | validate`` to the
    ``forkjoin-sim`` commands."""
    top = subparsers.add_parser(
        "cassandra", help="Cassandra latency: Theorem 4, simulation, calibration to "
                          "benchmarks, validation",
        description="Cassandra latency: Theorem 4 of Wang, Li & Shen (write latency), "
                    "simulations of Cassandra writes at two levels of detail, and "
                    "models of real clusters calibrated on their benchmark rows "
                    "(calibrate, predict --model).")
    sub = top.add_subparsers(dest="cassandra_command", required=True,
                             parser_class=_Parser)

    p = sub.add_parser("predict", help="Theorem 4 for every consistency level, or a "
                                        "calibrated model (--model) for measured rows")
    p.add_argument("--nodes", type=whole(1, 10 ** 6, "--nodes"),
                   help="n, cluster size (with --model: predict a cluster of this size, "
                        "the fitted replicas, from the calibrated one; default its own)")
    p.add_argument("--replicas", type=whole(1, 10 ** 6, "--replicas"),
                   help="r, replication factor")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--local-fraction", type=real(0.0, 1.0, what="--local-fraction"), help="l, fraction of local writes")
    how.add_argument("--policy", help=POLICY_HELP)
    p.add_argument("--local-basic", help="LT(1,1,1), mean latency of a local write")
    p.add_argument("--remote-basic", help="1:RT(1,1,1),2:RT(2,2,2),... mean latencies")
    p.add_argument("--basic-csv", help="CSV with columns kind (local/remote), size, mean "
                                       "(e.g. rows of cassandra_basic_inputs.csv)")
    p.add_argument("--json", action="store_true",
                   help="print one object: consistency level -> predicted mean (with "
                        "--model: a list, one object per query row)")
    g = p.add_argument_group("calibrated model", "instead of the Theorem 4 options")
    g.add_argument("--model", help="MODEL.toml written by cassandra calibrate")
    g.add_argument("--measurements", help="QUERY.csv: rows to predict (columns of a "
                                          "measurement file; mean_ms may be empty), or "
                                          "benchmark output as calibrate takes it")
    g.add_argument("--threads", type=whole_list(1, MAX_THREADS, "--threads"),
                   help="instead of --measurements, predict a grid: these client thread "
                        "counts (e.g. 100,200,800) at every --consistency and --operation")
    g.add_argument("--consistency", type=level_list(GRID_LEVELS, "--consistency"),
                   help="levels of the --threads grid: names as a measurement file "
                        "takes them (LOCAL_ONE and LOCAL_QUORUM as ONE and QUORUM, "
                        "refused by a model placed in data centres) or "
                        "a number of acknowledgements (default ONE,QUORUM,ALL)")
    g.add_argument("--operation", type=choice_list(("read", "write"), "--operation"),
                   help="operations of the --threads grid (default: those the model was "
                        "fitted on)")
    g.add_argument("--think-ms", type=real(0.0, 1e9, what="--think-ms"),
                   help="each client's pause (ms) between a reply and its next request "
                        "in the --threads grid, written in its think_ms column (default: "
                        "the fitted rows' pauses, carried as for a query row that "
                        "states none)")
    g.add_argument("--out", help="write the predicted rows to this file instead of "
                                 "printing them (with --json, both): .csv, .json (a "
                                 "list of objects) or .parquet (needs pyarrow)")
    g.add_argument("--figure", help="PRED.png: query rows (and measured values where "
                                    "given) with the model's curves and 95%% bands")
    g.add_argument("--seed", type=seed, default=None,
                   help="seed of the intervals' posterior draws (default 0)")
    p.set_defaults(handler=_cmd_predict)

    p = sub.add_parser("calibrate", help="fit a model to benchmark summaries "
                                         "(throughput, mean latency per configuration)")
    p.add_argument("--nodes", type=whole(1, 10 ** 6, "--nodes"), required=True,
                   help="nodes of the measured cluster")
    p.add_argument("--replicas", type=whole(1, 10 ** 6, "--replicas"), required=True,
                   help="its replication factor")
    p.add_argument("--measurements", required=True,
                   help="FIT.csv: operation,consistency,threads|rate,throughput,mean_ms"
                        "[,std_ms,p50_ms,p95_ms,p99_ms,read_fraction,think_ms,run]; or a "
                        "YCSB "
                        "output, "
                        "a cassandra-stress summary, or a side table CSV "
                        "file,threads,consistency[,operations] naming such outputs "
                        "(docs/cassandra/calibration.md)")
    p.add_argument("--out", required=True, help="MODEL.toml to write")
    p.add_argument("--report", help="fit report REPORT.md or REPORT.json")
    p.add_argument("--structure", default=None,
                   help="model structure: one of the closed-network structures "
                        "(replica-queues, shared, shared-digest, shared-digest-client, "
                        "client-bound, random-hops, digest-random-hops, lanes, lanes-client, "
                        "lanes-replicas, lanes-fixed-hops), auto "
                        "(the one of lanes, digest-random-hops, client-bound that best "
                        "predicts the file's own held-out levels and larger loads; "
                        "it refits every candidate, about 20 s on 2 cores for a 30-row "
                        "file, 2 min for 60) or "
                        "simulated (replica stages simulated, the previous default); "
                        "default: the one with the smallest held-out error on the "
                        "published data (docs/cassandra/calibration.md)")
    p.add_argument("--prior", help="PRIOR.toml or MODEL.toml of another cluster: what "
                                   "the rows cannot determine comes from it (default: "
                                   "the built-in prior fitted on the published clusters)")
    p.add_argument("--datacentres", help="DC.toml: a [datacentres] table placing the "
                   "nodes and the client machine in data centres with the one-way times "
                   "in milliseconds (half a ping round trip) "
                   "between them (nodes, client, hops, optional coordinator = nearest|"
                   "random|one and times = given|fitted; docs/cassandra/calibration.md); "
                   "the model then queues each wide-area link (default: one data centre, "
                   "or, for rows whose higher levels add a wide-area round trip to a "
                   "flat ONE, or measured without ONE whose lowest and highest levels "
                   "are fixed delays a wide-area round trip apart, each node and the "
                   "client in one of its own with the times fitted)")
    p.add_argument("--cores", type=whole(1, 4096, "--cores"), default=None,
                   help="cores per node of the measured cluster, for the structures "
                        "that queue on them (default 4; the default structure, lanes, "
                        "fits its lanes per node instead and refuses it)")
    p.add_argument("--client-cores", type=whole(1, 4096, "--client-cores"),
                   default=None,
                   help="cores of the load generator's machine, for the structures "
                        "that queue on it (shared-digest-client, client-bound, "
                        "random-hops, lanes-client; default 4)")
    p.add_argument("--figure", help="FIT.png: measured rows and model curves with 95%% "
                                    "bands against client threads (open-loop rows: against the "
                                    "offered rate)")
    p.add_argument("--threads", default=None,
                   help="--structure simulated: candidate effective threads per stage, "
                        "tried in turn (default 1,2,4,8,16,32)")
    p.add_argument("--workers", type=whole(1, 1024, "--workers"), default=None,
                   help="--structure auto: processes for its held-out calibrations "
                        "(the same numbers on any count; default: every core)")
    p.add_argument("--seed", type=seed, default=0,
                   help="seed of the --figure bands' posterior draws (a closed-network "
                        "fit itself draws nothing) and of --structure simulated's runs "
                        "(default 0)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=_cmd_calibrate)

    p = sub.add_parser("simulate", help="simulate one Cassandra write configuration")
    p.add_argument("--nodes", type=whole(1, 10 ** 6, "--nodes"), required=True,
                   help="nodes n of the cluster")
    p.add_argument("--replicas", type=whole(1, 10 ** 6, "--replicas"), required=True,
                   help="replication factor r")
    p.add_argument("--consistency", required=True,
                   help="ONE | TWO | THREE | QUORUM | ALL | a whole number k")
    p.add_argument("--policy", required=True, help=POLICY_HELP)
    p.add_argument("--rate", type=real(0.0, low_open=True, what="--rate"),
                   help="writes per unit time (open, Poisson); or use --clients")
    p.add_argument("--local-service", required=True, help=SPEC_HELP)
    p.add_argument("--remote-service", required=True, help=SPEC_HELP)
    p.add_argument("--local-mean", type=real(0.0, low_open=True, what="--local-mean"),
                   default=None,
                   help="mean of a parametric --local-service (default 1)")
    p.add_argument("--remote-mean", type=real(0.0, low_open=True, what="--remote-mean"),
                   default=None,
                   help="mean of a parametric --remote-service (default 1)")
    p.add_argument("--level", type=whole(1, 2, "--level"), choices=[1, 2], default=1,
                   help="1: one FCFS queue per node; 2: staged write path (steps "
                        "engine)")
    p.add_argument("--config", help="TOML overriding the level-2 defaults; with the "
                                    "queued-work options a [datacentres] table (nodes, "
                                    "hops per pair)")
    p.add_argument("--jobs", type=whole(2, 10 ** 9, "--jobs"), default=200_000,
                   help="writes to simulate")
    p.add_argument("--warmup", default="0.1",
                   help="fraction of writes dropped as warm-up, or 'auto' (MSER-5)")
    p.add_argument("--sample-every", type=whole(1, None, "--sample-every"), default=1,
                   help="keep every s-th write after warm-up")
    p.add_argument("--seed", type=seed, default=0, help=SEED_HELP)
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (the keys of forkjoin-sim simulate --json)")
    add_closed_loop_arguments(p)
    from forkjoin_cli._steps import add_step_arguments

    add_step_arguments(p)
    p.set_defaults(handler=_cmd_simulate)

    p = sub.add_parser("validate", help="Theorem 4 vs simulation (paper's Figs. 5, 6)")
    p.add_argument("--out", required=True, help="directory for CSV, PNG and summary")
    p.add_argument("--quick", action="store_true", help="small runs (minutes)")
    p.add_argument("--levels", type=choice_list(["1", "2"], "--levels"),
                   default=["1", "2"], help="1, 2 or 1,2")
    p.add_argument("--loads", type=real_list(0.0, 1.0, low_open=True, high_open=True,
                                             what="--loads"),
                   default=list(experiment.LOADS),
                   help="per-node utilisation of the busiest configuration (r=5, all "
                        "remote) at level 1, of one mutation thread at level 2")
    # validate has no --*-mean options: a shape is rescaled to the fixed mean
    fixed = ("exp or a scipy.stats name with its shapes (e.g. lognormal:0.8, gamma:2), "
             "rescaled to mean {}, or empirical:PATH (its own times)")
    p.add_argument("--local-service", default="exp", help=fixed.format("0.2"))
    p.add_argument("--remote-service", default="lognormal:0.8", help=fixed.format("1"))
    p.add_argument("--config", help="TOML overriding the level-2 defaults")
    p.add_argument("--jobs", type=whole(2, 10 ** 9, "--jobs"),
                   help="writes per run (default by --quick)")
    p.add_argument("--seed", type=seed, default=0, help=SEED_HELP)
    p.add_argument("--json", action="store_true", help="print the written paths as JSON")
    p.set_defaults(handler=_cmd_validate)
