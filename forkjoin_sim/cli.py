"""The ``forkjoin-sim`` command: a thin layer that parses arguments and calls the API.

Sub-commands that need the closed forms (``approx``, ``fig2``, ``validate``,
``cassandra`` ...) live in ``validation`` because ``forkjoin_sim`` must not import
``analytic``; they are found through the ``forkjoin_sim.commands`` entry-point group.
A plugin's ``register(subparsers)`` adds its sub-commands and returns the exception
types that mean "bad input" (printed as one line, exit status 2).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import sys

from .errors import ConfigError

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (what is wrong, where to look), options
    are never abbreviated (``--job`` is not ``--jobs``) and an option given twice is
    an error, not "the last one wins"."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        from .errors import shorten

        self.exit(EXIT_BAD_INPUT,
                  f"{self.prog}: error: {shorten(message)} (see {self.prog} --help)\n")

    def parse_known_args(self, args=None, namespace=None):
        self._refuse_repeats(sys.argv[1:] if args is None else list(args))
        return super().parse_known_args(args, namespace)

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


def add_simulate_arguments(p: argparse.ArgumentParser) -> None:
    """The model and run options shared by ``simulate`` and other commands."""
    from .options import SEED_LIMIT, whole

    p.add_argument("--nodes", type=whole(1, MAX_NODES, "--nodes"), required=True,
                   help="n, number of nodes")
    p.add_argument("--replicas", type=whole(1, MAX_NODES, "--replicas"), required=True,
                   help="r, tasks per job")
    p.add_argument("--quorum", type=whole(1, MAX_NODES, "--quorum"), required=True,
                   help="k, completions a job waits for")
    from .options import real

    p.add_argument("--rho", type=real(0.0, 1e100, low_open=True, what="--rho"),
                   help="load per job, rho = lambda*E[X]; per-node load is r*rho/n "
                        "(open arrivals; not with --clients)")
    p.add_argument("--mu", type=real(1e-100, 1e100, what="--mu"), default=None,
                   help="service rate; parametric services are scaled to mean 1/mu "
                        "(default 1)")
    p.add_argument("--service", default="exp",
                   help="exp | erlang:K | lognormal:SIGMA | weibull:SHAPE | gamma:SHAPE | "
                        "deterministic | empirical:PATH | NAME:ARGS (scipy.stats)")
    p.add_argument("--placement", choices=["random", "ring"], default="random")
    p.add_argument("--purging", action="store_true",
                   help="cancel unfinished tasks at the k-th completion (SimPy engine)")
    p.add_argument("--jobs", type=parse_jobs, default=200_000,
                   help="jobs to simulate, or 'auto': as many as a +-1%% interval "
                        "needs (200,000 first; at most 50 million)")
    p.add_argument("--warmup", default="0.1",
                   help="fraction of jobs dropped as warm-up, or 'auto' (MSER-5)")
    p.add_argument("--sample-every", type=whole(1, None, "--sample-every"), default=1,
                   help="keep every s-th job after warm-up (the paper uses 10)")
    p.add_argument("--seed", type=whole(0, SEED_LIMIT - 1, "--seed"), default=0)
    p.add_argument("--engine", choices=["fast", "fused", "simpy"], default="fast",
                   help="fast: numba Lindley over drawn blocks, exact percentiles; "
                        "fused: one compiled loop, constant memory, every core "
                        "(percentiles within 0.8%%); simpy: event-level reference")
    p.add_argument("--replications", type=whole(1, 10_000, "--replications"), default=1,
                   help="fused engine: independent replications (the numbers depend "
                        "on this, not on --workers)")
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
    from .options import whole

    g.add_argument("--clients", type=whole(1, 10_000_000, "--clients"), metavar="N",
                   help="number of clients")
    from .options import real

    g.add_argument("--think", type=real(0.0, 1e100, what="--think"), default=None,
                   metavar="Z",
                   help="mean think time, same unit as the service mean (default 0)")
    g.add_argument("--think-law", default=None, metavar="SPEC",
                   help="shape of the think time, a --service spec rescaled to mean Z "
                        "(default exp); a spec with its own scale (e.g. exp:2) needs "
                        "no --think")


def closed_loop_from_args(args) -> dict:
    """The closed-loop keyword arguments of a model, or {} without ``--clients``."""
    from .service import check_mean_applies, fixes_own_scale, parse_service

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


def parse_jobs(text: str):
    """``--jobs``: a whole number, or ``auto``."""
    from .options import parse_whole

    if text.strip() == "auto":
        return "auto"
    return parse_whole(text, "--jobs", low=2, error=argparse.ArgumentTypeError)


def parse_warmup(text: str):
    """``--warmup``: a fraction in [0, 1), or ``auto`` (MSER-5)."""
    from .options import parse_real

    if text == "auto":
        return "auto"
    return parse_real(text, "--warmup (a fraction in [0, 1) or 'auto')", 0.0, 1.0,
                      high_open=True)


def model_from_args(args):
    """Build the :class:`ForkJoinModel` that ``add_simulate_arguments`` describes."""
    from .model import ForkJoinModel
    from .service import check_mean_applies, parse_service

    from .system import parse_speeds

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
    return ForkJoinModel(args.nodes, args.replicas, args.quorum, load=args.rho,
                         service=service, placement=args.placement,
                         purging=args.purging, speeds=speeds, **closed)


def _cmd_simulate(args) -> int:
    from .simulation import simulate

    if args.workers is not None and args.engine != "fused":
        raise ConfigError(f"--workers sets the fused engine's threads; the {args.engine} "
                          "engine runs on one core: add --engine fused or drop --workers")
    model = model_from_args(args)
    # simulate() checks the run against memory before any work, as for API callers
    result = simulate(model, jobs=args.jobs, seed=args.seed, engine=args.engine,
                      warmup=parse_warmup(args.warmup), sample_every=args.sample_every,
                      progress=not args.json, replications=args.replications,
                      workers=args.workers)
    if args.json:
        from .io import json_text

        print(json_text(result.to_dict()))
    else:
        print(result.report())
    return 0


#: Commands defined in this package: running one of them loads no plugin (the
#: plugins import the closed forms, pandas and matplotlib, which take seconds).
CORE_COMMANDS = ("simulate", "mix", "sweep", "staleness")


def build_parser(plugins: bool = True
                 ) -> tuple[argparse.ArgumentParser, tuple[type[BaseException], ...]]:
    from importlib.metadata import PackageNotFoundError, version

    parser = _Parser(prog="forkjoin-sim",
                     description="Simulate and analyse (n,r,k) fork-join queues.")
    try:
        installed = version("forkjoin-sim")
    except PackageNotFoundError:  # run from a source tree that is not installed
        installed = "unknown (not installed)"
    parser.add_argument("--version", action="version",
                        version=f"forkjoin-sim {installed}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("simulate", help="simulate one (n,r,k) queue")
    add_simulate_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_simulate)

    from .mix_cli import register as register_mix
    from .staleness_cli import register as register_staleness
    from .sweep_cli import register as register_sweep

    register_mix(sub)
    register_staleness(sub)
    user_errors: tuple[type[BaseException], ...] = (ConfigError,)
    user_errors += tuple(register_sweep(sub) or ())
    if plugins:
        from importlib.metadata import entry_points

        for plugin in entry_points(group="forkjoin_sim.commands"):
            user_errors += tuple(plugin.load()(sub))
    return parser, user_errors


def main(argv: list[str] | None = None) -> int:
    from .options import warnings_after_success

    closed = _reopen_closed_streams()
    numba_error = _numba_settings_error()
    if numba_error is not None:
        print(f"forkjoin-sim: error: {numba_error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    words = sys.argv[1:] if argv is None else argv
    core = bool(words) and words[0] in CORE_COMMANDS
    parser, user_errors = build_parser(plugins=not core)
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # usage errors and --help: a status, not an exception
        return int(stop.code or 0)
    if "stdout" in closed and getattr(args, "out", None) is None:
        # the result would be lost after all the work: refuse before it
        print(f"forkjoin-sim {args.command}: error: standard output is closed; give "
              "--out FILE or open it (e.g. >/dev/null)", file=sys.stderr)
        return EXIT_BAD_INPUT
    with _stop_signals_interrupt() as received:
        try:
            with warnings_after_success():
                status = int(args.handler(args) or 0)
                sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
                return status
        except user_errors as exc:
            print(f"forkjoin-sim {args.command}: error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except KeyboardInterrupt:
            import signal

            signum = received[0] if received else signal.SIGINT
            how = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
            print(f"forkjoin-sim {args.command}: interrupted{how}", file=sys.stderr)
            return 128 + signum
        except BrokenPipeError:
            # the reader left (| head): stop quietly, as Unix tools do
            _discard_stdout()
            return 1
        except OSError as exc:
            if exc.filename is not None or exc.errno not in (errno.ENOSPC, errno.EIO,
                                                             errno.EFBIG, errno.EDQUOT):
                raise
            _discard_stdout()
            print(f"forkjoin-sim {args.command}: error: cannot write the output "
                  f"({exc.strerror}); free space or send it elsewhere", file=sys.stderr)
            return 1


def _reopen_closed_streams() -> set[str]:
    """The standard streams that were closed when the command started ("stdin",
    "stdout", "stderr"); each now reads or writes ``os.devnull``.

    A closed descriptor would be reused by the next file or pipe opened (a worker
    pool's pipe on descriptor 2 takes every stray write), and Python sets the
    stream to None, on which the first print fails after the work is done.
    """
    import os

    closed = set()
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        flags = os.O_RDONLY if fd == 0 else os.O_WRONLY
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, flags)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:
            closed.add(name)
            setattr(sys, name, open(os.devnull, "r" if fd == 0 else "w",
                                    encoding="utf-8"))
    return closed


def _numba_settings_error() -> str | None:
    """What is wrong with the ``NUMBA_*`` environment variables, if numba refuses
    them when it is imported (``NUMBA_NUM_THREADS=0``), else None."""
    import os

    settings = sorted(name for name in os.environ if name.startswith("NUMBA_"))
    if not settings:
        return None  # nothing to refuse: numba is imported later, only if needed
    try:
        import numba  # noqa: F401
    except Exception as exc:  # numba's own check, whatever its type
        given = ", ".join(f"{name}={os.environ[name]!r}" for name in settings)
        reason = " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
        return (f"numba refuses its settings from the environment ({given}): "
                f"{reason}; fix or unset the variable")
    return None


@contextlib.contextmanager
def _stop_signals_interrupt():
    """SIGTERM and SIGHUP, while the block runs, stop the command as Ctrl-C does.

    The first stop signal raises KeyboardInterrupt, so the same cleanup runs
    (temporary files removed, worker pools ended, the "interrupted" line); a later
    SIGTERM or SIGHUP is ignored so that it cannot cut that cleanup short, while
    Ctrl-C interrupts again, as always. Signals ignored when the command started
    (``nohup``, a background job's SIGINT) stay ignored. Yields the list of the
    stop signals' numbers, in the order they arrived.
    """
    import signal
    import threading

    received: list[int] = []

    def stop(signum, frame):
        received.append(signum)
        if signum == signal.SIGINT or len(received) == 1:
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield received  # only the main thread may set handlers
        return
    previous = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is None:
            continue
        handler = signal.getsignal(number)
        if handler in (signal.default_int_handler, signal.SIG_DFL):
            previous[number] = signal.signal(number, stop)
    try:
        yield received
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _discard_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's last flush of
    unwritable output does not print a traceback after our one line."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
