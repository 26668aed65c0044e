"""Shared argument parsing: the parser class every command uses, and the model and
closed-loop options of ``simulate`` that other commands reuse."""

from __future__ import annotations

import argparse
import re
import sys

from forkjoin_sim.errors import ConfigError

EXIT_BAD_INPUT = 2
#: The help of every --seed.
SEED_HELP = ("seed of every random stream of the run (the same seed gives the same "
             "numbers on any machine and worker count; default %(default)s)")


#: Words users type for an option under another name, the options they mean in the
#: order tried (the paper's symbols, and the load as a rate).
SYNONYMS = {
    "rate": ("rate", "arrival-rate", "rho"), "lambda": ("rate", "arrival-rate", "rho"),
    "load": ("rho", "loads"), "arrival-rate": ("rate", "rho"), "n": ("nodes",),
    "r": ("replicas",), "k": ("quorum",), "threads": ("clients", "threads"),
    "users": ("clients", "threads"), "level": ("consistency",),
    "cl": ("consistency",),
}


class _DefaultsFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that shows every option's default: a help text that does not name its
    default gets "(default VALUE)". Options without a value to show (None, a flag's
    False) keep their text; descriptions and epilogs keep their line breaks."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (not action.option_strings or "default" in text.lower()
                or default is None or default is argparse.SUPPRESS
                or isinstance(default, bool) or default == []):
            return text
        if isinstance(default, (list, tuple)):  # as the user writes it: 1,2
            shown = ",".join(map(str, default)).replace("%", "%%")
        else:
            shown = "%(default)s"
        return f"{text} (default {shown})"


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (what is wrong, where to look), options
    are never abbreviated (``--job`` is not ``--jobs``), an option given twice is
    an error, not "the last one wins", and the help shows every default."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        if kwargs.get("formatter_class") in (None, argparse.HelpFormatter,
                                             argparse.RawDescriptionHelpFormatter):
            kwargs["formatter_class"] = _DefaultsFormatter
        super().__init__(*args, **kwargs)
        # a value that starts like a negative number ("--t-grid -1,2", "--speeds
        # -1,2") is a value, so its converter says what is wrong; argparse takes only
        # "-1" and "-.5" as values and calls "-1,2" an option ("expected one
        # argument"). No option of this command line starts with a digit.
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message):
        from forkjoin_sim.errors import shorten

        # a missing subcommand is named by its destination ("cassandra_command"):
        # say what to give instead
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and message in (
                    f"the following arguments are required: {name}"
                    for name in (action.dest, action.metavar) if name):
                message = f"give a command: one of {', '.join(action.choices)}"
        self.exit(EXIT_BAD_INPUT,
                  f"{self.prog}: error: {shorten(message)} (see {self.prog} --help)\n")

    def parse_known_args(self, args=None, namespace=None):
        given = sys.argv[1:] if args is None else list(args)
        self._refuse_repeats(given)
        self._refuse_unknown(given)
        namespace, extras = super().parse_known_args(args, namespace)
        self._refuse_empty(namespace)
        return namespace, extras

    def _refuse_empty(self, namespace) -> None:
        """An option given an empty value (``--out ''``) is refused, not read as not
        given (no option's default is empty, and none means anything by it)."""
        for action in self._actions:
            value = getattr(namespace, action.dest, None)
            if action.option_strings and isinstance(value, str) and not value.strip():
                self.error(f"{action.option_strings[-1]} is empty; give a value")

    def _refuse_unknown(self, args) -> None:
        """An option this parser does not have, named before argparse would complain
        of a required option missing (``--quor 2`` is not "--quorum is required"),
        with the nearest it has. Each parser checks its own words: one with
        sub-commands those before the sub-command (``forkjoin-sim --ver``,
        ``forkjoin-sim cassandra --jo``), whose parser checks the rest."""
        commands = any(isinstance(a, argparse._SubParsersAction) for a in self._actions)
        value_next = False
        for token in args:
            if token == "--":
                break
            if value_next:
                value_next = False
                continue
            name = token.split("=", 1)[0]
            if not name.startswith("--"):
                if commands:
                    break  # the sub-command: the rest is its parser's
                continue
            action = self._option_string_actions.get(name)
            if action is None:
                self.error(self._unknown_option(name))
            value_next = commands and "=" not in token and action.nargs != 0

    def _unknown_option(self, name: str) -> str:
        """The one line for an option this parser does not have: every option it
        begins when it is an abbreviation of several (options are never
        abbreviated, so none is picked), else the nearest option, if any."""
        options = {o[2:]: o for o in self._option_string_actions if o.startswith("--")}
        message = f"{name} is not an option of this command"
        begun = sorted(o for o in options.values() if o.startswith(name)) if name[2:] else []
        if len(begun) > 1:
            listed = ", ".join(begun[:-1]) + " and " + begun[-1]
            return (f"{message} (options are never abbreviated): it begins {listed}; "
                    "give one in full")
        near = begun[0] if begun else self._nearest(name[2:], options)
        return message + (f"; did you mean {near}?" if near else "")

    def _nearest(self, word: str, options: dict) -> str | None:
        """The option a mistyped ``--word`` most likely meant, or None: a near
        spelling (quor: --quorum), else a `SYNONYMS` entry this command has (rate:
        --rho where there is no --rate), else an option with the word in its name,
        else one whose help begins with it (words of 3 letters or more), else a looser
        spelling. The "--" both share is no likeness."""
        import difflib

        near = difflib.get_close_matches(word, options, n=1, cutoff=0.75)
        near = near or [o for o in SYNONYMS.get(word.lower(), ()) if o in options][:1]
        if not near and len(word) >= 3:
            pattern = re.compile(rf"\b{re.escape(word.replace('-', ' '))}s?\b", re.I)
            near = ([o for o in options if word in o.split("-")]
                    or [o for o in options if pattern.search(" ".join(
                        (self._option_string_actions[options[o]].help or "").split()[:2]))])
        near = near or difflib.get_close_matches(word, options, n=1)
        return options[near[0]] if near else None

    def _refuse_repeats(self, args) -> None:
        seen: dict[argparse.Action, str] = {}
        for token in args:
            if token == "--":
                break
            if not token.startswith("--"):
                continue
            action = self._option_string_actions.get(token.split("=", 1)[0])
            if action is None or not isinstance(action, (
                    argparse._StoreAction, argparse._StoreConstAction)):
                continue  # another parser's option, or one meant to repeat
            name = token.split("=", 1)[0]
            if action in seen:
                alias = f" (also as {seen[action]})" if seen[action] != name else ""
                self.error(f"{name} is given twice{alias}; give it once")
            seen[action] = name


#: The largest cluster the CLI takes: `forkjoin_sim.system.MAX_NODES` (not imported
#: from there, which would load numba before the arguments are even parsed; a test
#: keeps the two equal).
MAX_NODES = 1_000_000


#: Options naming a file a command writes.
OUTPUT_OPTIONS = ("out", "figure", "report", "write_synthetic")


def option_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """How the command line spells each destination of ``parser`` and its
    sub-commands: an option's longest string (``--basic-csv``), a positional's
    metavar or name (``spec``)."""
    names: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names.update(option_names(sub))
        elif action.dest not in (argparse.SUPPRESS, "help"):
            names.setdefault(action.dest, max(action.option_strings, key=len)
                             if action.option_strings
                             else str(action.metavar or action.dest))
    return names


def _paths(value) -> list[str]:
    """The text or path values of an option (one, or each of a list)."""
    import os

    values = value if isinstance(value, (list, tuple)) else [value]
    return [os.fspath(v) for v in values
            if isinstance(v, (str, os.PathLike)) and os.fspath(v)]


def _is_file(path: str) -> bool:
    """Whether ``path`` names an existing regular file (False for what cannot be a
    name here: too long, a NUL)."""
    from pathlib import Path

    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def _side_table_files(path: str) -> list:
    """The outputs a side table lists (`sizing.benchmark_formats.side_table_files`;
    imported only for a file that may be one)."""
    from sizing.benchmark_formats import side_table_files

    return side_table_files(path)


def check_outputs_spare_inputs(args, names: dict[str, str] | None = None) -> None:
    """Refuse, before any work, an output file that is also a file the command line
    reads: a latency file of a service spec ("empirical:PATH" of --service,
    --read-service, --hop ...), any other option's value naming an existing file
    (--config, --basic-csv, --measurements, a sweep spec ...) or a benchmark output
    that a side table among them lists: the results would overwrite it; and two
    outputs in one file. ``names``: `option_names` of the
    parser (default: ``--`` and the destination)."""
    from forkjoin_sim.checks import check_not_an_input, same_file
    from forkjoin_sim.laws.service import spec_files

    def shown(name):
        return (names or {}).get(name, f"--{name.replace('_', '-')}")

    outputs = [(shown(name), path) for name in OUTPUT_OPTIONS
               for path in _paths(getattr(args, name, None))]
    if not outputs:
        return
    given = [(name, path) for name, value in vars(args).items()
             if name not in OUTPUT_OPTIONS for path in _paths(value)]
    read = [(file, f"{shown(name)} {path}") for name, path in given
            for file in spec_files(path)]
    read += [(path, shown(name)) for name, path in given if _is_file(path)]
    read += [(listed, f"{shown(name)} {path}") for name, path in given
             if _is_file(path) for listed in _side_table_files(path)]
    written = []
    for option, value in outputs:
        check_not_an_input(value, option, read)
        # two outputs in one file: the second would replace the first
        for path, other in written:
            if same_file(value, path):
                raise ConfigError(f"{option} {value} is also the file of {other}; "
                                  "give each output a file of its own")
        written.append((value, option))


def add_simulate_arguments(p: argparse.ArgumentParser) -> None:
    """The model and run options shared by ``simulate`` and other commands."""
    from forkjoin_sim.checks import SEED_LIMIT
    from forkjoin_cli.types import whole

    p.add_argument("--nodes", type=whole(1, MAX_NODES, "--nodes"), required=True,
                   help="n, number of nodes")
    p.add_argument("--replicas", type=whole(1, MAX_NODES, "--replicas"), required=True,
                   help="r, tasks per job")
    p.add_argument("--quorum", type=whole(1, MAX_NODES, "--quorum"), required=True,
                   help="k, completions a job waits for")
    from forkjoin_cli.types import real

    p.add_argument("--rho", type=real(0.0, 1e100, low_open=True, what="--rho"),
                   help="load per job, rho = lambda*E[X]; per-node load is r*rho/n "
                        "(open arrivals; not with --clients)")
    p.add_argument("--mu", type=real(1e-100, 1e100, what="--mu"), default=None,
                   help="service rate; parametric services are scaled to mean 1/mu "
                        "(default 1)")
    p.add_argument("--service", default="exp",
                   help="exp | erlang:K | lognormal:SIGMA | weibull:SHAPE | gamma:SHAPE | "
                        "deterministic | empirical:PATH | NAME:ARGS (scipy.stats)")
    p.add_argument("--placement", choices=["random", "ring"], default="random",
                   help="where a job's tasks go: random (r distinct nodes drawn per "
                        "job, the paper's model) or ring (r consecutive nodes from a "
                        "random one, as a token ring places replicas; default random)")
    p.add_argument("--purging", action="store_true",
                   help="cancel unfinished tasks at the k-th completion (SimPy engine)")
    p.add_argument("--jobs", type=parse_jobs, default=200_000,
                   help="jobs to simulate, or 'auto': as many as a +-1%% interval "
                        "needs (200,000 first; at most 50 million)")
    p.add_argument("--warmup", default="0.1",
                   help="fraction of jobs dropped as warm-up, or 'auto' (MSER-5)")
    p.add_argument("--sample-every", type=whole(1, None, "--sample-every"), default=1,
                   help="keep every s-th job after warm-up (the paper uses 10)")
    p.add_argument("--seed", type=whole(0, SEED_LIMIT - 1, "--seed"), default=0,
                   help=SEED_HELP)
    p.add_argument("--engine", choices=["auto", "fast", "fused", "simpy"], default="auto",
                   help="auto (default): fused for long runs of a model it covers, else "
                        "fast (simpy for purging); the output says which and why. "
                        "fast: numba Lindley over drawn blocks, exact percentiles; "
                        "fused: one compiled loop, constant memory, every core "
                        "(percentiles within 0.39%%); simpy: event-level reference")
    p.add_argument("--replications", type=whole(1, 10_000, "--replications"), default=None,
                   help="fused engine: independent replications (the numbers depend "
                        "on this, not on --workers; default 1, 8 when auto picks fused)")
    p.add_argument("--workers", type=whole(1, 1024, "--workers"),
                   help="fused engine: threads (default: every core)")
    add_closed_loop_arguments(p)
    p.add_argument("--speeds", metavar="SPEC",
                   help="uneven nodes: one speed factor per node (1,1,1,1,1,0.5), "
                        "slow:K:SPEED (the first K nodes at SPEED) or "
                        "stragglers:FRACTION:SPEED (drawn per seed); a task takes "
                        "service/speed")


def add_closed_loop_arguments(p: argparse.ArgumentParser) -> None:
    """``--clients``, ``--think``, ``--think-law``: closed-loop clients (YCSB threads)."""
    g = p.add_argument_group(
        "closed loop", "N client threads, each sending its next request a think time "
        "after the previous one completed (as YCSB and cassandra-stress do); "
        "throughput is then an output")
    from forkjoin_cli.types import whole

    g.add_argument("--clients", type=whole(1, 10_000_000, "--clients"), metavar="N",
                   help="number of clients")
    from forkjoin_cli.types import real

    g.add_argument("--think", type=real(0.0, 1e100, what="--think"), default=None,
                   metavar="Z",
                   help="mean think time, same unit as the service mean (default 0)")
    g.add_argument("--think-law", default=None, metavar="SPEC",
                   help="shape of the think time, a --service spec rescaled to mean Z "
                        "(default exp); a spec with its own scale (e.g. exp:2) needs "
                        "no --think")


def closed_loop_from_args(args) -> dict:
    """The closed-loop keyword arguments of a model, or {} without ``--clients``."""
    from forkjoin_sim.laws.service import check_mean_applies, fixes_own_scale, parse_service

    if args.clients is None:
        if args.think is not None or args.think_law is not None:
            raise ConfigError("--think and --think-law describe closed-loop clients; "
                              "add --clients N")
        return {}
    think, law = (0.0 if args.think is None else args.think), None
    if args.think_law is not None and fixes_own_scale(args.think_law):
        law = parse_service(args.think_law)
        if args.think is not None:
            check_mean_applies(args.think_law, "--think-law", "--think")
        think = float(law.mean())
    elif args.think_law is not None:
        if think == 0:
            raise ConfigError(f"--think-law {args.think_law!r} is a shape rescaled to "
                              "the mean think time; add --think Z > 0 (or give the law "
                              "its own scale, e.g. exp:2)")
        law = parse_service(args.think_law, mean=think)
    return {"clients": args.clients, "think": think, "think_law": law}


def refuse_unused_write_threads(args) -> None:
    """Refuse ``--write-threads`` with ``--structure shared`` (one queue, served by
    ``--read-threads``: there is no mutation stage for it to set), in every command
    that has both options."""
    if args.structure == "shared" and args.write_threads is not None:
        raise ConfigError("--write-threads sets the mutation stage, which --structure "
                          "shared does not have (one queue served by --read-threads "
                          "threads), so it would do nothing; leave it out, or use "
                          "--structure stages")


def parse_jobs(text: str):
    """``--jobs``: a whole number, or ``auto``."""
    from forkjoin_sim.checks import parse_whole

    if text.strip() == "auto":
        return "auto"
    return parse_whole(text, "--jobs", low=2, error=argparse.ArgumentTypeError)


def parse_warmup(text: str):
    """``--warmup``: a fraction in [0, 1), or ``auto`` (MSER-5)."""
    from forkjoin_sim.checks import parse_real

    if text == "auto":
        return "auto"
    return parse_real(text, "--warmup (a fraction in [0, 1) or 'auto')", 0.0, 1.0,
                      high_open=True)


def model_from_args(args):
    """Build the :class:`ForkJoinModel` that ``add_simulate_arguments`` describes."""
    from forkjoin_sim.model import ForkJoinModel
    from forkjoin_sim.laws.service import check_mean_applies, parse_service

    from forkjoin_sim.system import parse_speeds

    mu = 1.0 if args.mu is None else args.mu
    closed = closed_loop_from_args(args)
    if closed and args.rho is not None:
        raise ConfigError("--rho sets an open arrival rate; with --clients the "
                          "throughput is an output: drop one of them")
    if not closed and args.rho is None:
        raise ConfigError("give --rho (open arrivals) or --clients N (closed loop)")
    service = parse_service(args.service, mean=1.0 / mu)
    if args.mu is not None:
        check_mean_applies(args.service, "--service", "--mu")
    speeds = None if args.speeds is None else parse_speeds(args.speeds, args.nodes)
    if args.purging and args.quorum == args.replicas:
        idle = (f"--purging does nothing with --quorum {args.quorum} = --replicas "
                f"{args.replicas}: a job waits for every task, so none is ever cancelled")
        if getattr(args, "engine", None) in ("fast", "fused"):
            # the engine's own refusal would point at the slower engine instead
            raise ConfigError(f"{idle}; leave it out, and --engine {args.engine} runs")
        # warned, not refused: a sweep's replay command of such a point must still run
        import warnings

        warnings.warn(f"{idle}; it only moves the run onto the slower SimPy engine: "
                      "leave it out", UserWarning, stacklevel=2)
    return ForkJoinModel(args.nodes, args.replicas, args.quorum, load=args.rho,
                         service=service, placement=args.placement,
                         purging=args.purging, speeds=speeds, **closed)


