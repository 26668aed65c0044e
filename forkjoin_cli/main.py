"""The ``forkjoin-sim`` command: a thin layer that parses arguments and calls the API.

Each command is one module of this package, found by name in `COMMANDS` and imported
only when it runs (so ``forkjoin-sim simulate`` loads neither the closed forms nor
pandas). A command module defines ``register(subparsers)``, which adds its parser
and sets ``handler``. Bad input (a ``ConfigError`` of either library) is one line on
standard error and exit status 2.

To add a command: write ``forkjoin_cli/NAME.py`` with ``register`` and add one row
to `COMMANDS`.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import sys

from forkjoin_cli.arguments import (EXIT_BAD_INPUT, MAX_NODES, _Parser,  # noqa: F401
                                    add_closed_loop_arguments, add_simulate_arguments,
                                    closed_loop_from_args, model_from_args, parse_jobs,
                                    parse_warmup)

#: command -> (module of this package, group in ``--help``, one line of help).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "simulate": ("simulate", "simulate", "simulate one (n,r,k) queue"),
    "mix": ("mix", "simulate", "a Cassandra read/write mix: read path, stages, open "
                               "or closed loop"),
    "staleness": ("staleness", "simulate", "staleness (t-visibility, k-staleness) and "
                                           "latency of partial quorums under load"),
    "sweep": ("sweep", "simulate", "run a grid of simulations from a TOML spec"),
    "approx": ("approx", "closed forms", "closed-form estimate and bounds of "
                                         "T(n,r,k; rho) (Theorem 3)"),
    "timeouts": ("timeouts", "closed forms", "availability and waiting time under "
                                             "client timeouts, model vs simulation"),
    "estimators": ("estimators", "closed forms", "compare the closed-form estimators "
                                                 "with simulation"),
    "cassandra": ("cassandra", "Cassandra", "Cassandra latency: Theorem 4, simulation, "
                                            "calibration to benchmarks, validation"),
    "plan-consistency": ("plan_consistency", "plan", "read/write quorums (R, W) with "
                         "R + W > r: predicted mean and percentile of the mix"),
    "plan-capacity": ("plan_capacity", "plan", "smallest (n, r, consistency) meeting a "
                      "write-latency percentile SLA"),
    "fig2": ("fig2", "paper", "reproduce the paper's Fig. 2 (Theorem 3 vs simulation)"),
    "validate": ("validate", "paper", "check Theorems 1-3 and the Lemma by simulation; "
                                      "write a report"),
    "experiment": ("experiment", "paper", "the experiments behind docs/: PBS "
                   "reproduction, staleness under load, calibration hold-out, "
                   "Theorem 2 for low-variance service"),
}
GROUPS = ("simulate", "closed forms", "Cassandra", "plan", "paper")


def _command_list() -> str:
    width = max(map(len, COMMANDS)) + 2
    lines = ["commands:"]
    for group in GROUPS:
        lines.append(f"  {group}:")
        lines += [f"    {name:<{width}}{text}" for name, (_, g, text) in COMMANDS.items()
                  if g == group]
    return "\n".join(lines)


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked (the lookup
    costs every other run 40 ms of start-up)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs):
        kwargs.setdefault("default", argparse.SUPPRESS)
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version("forkjoin-sim")
        except PackageNotFoundError:  # run from a source tree that is not installed
            installed = "unknown (not installed)"
        print(f"forkjoin-sim {installed}")
        parser.exit()


def build_parser(command: str | None = None, every: bool = False) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported (none for None: the
    other commands are listed with their one line of help, not loaded); with
    ``every``, every command's module (for tests and documentation)."""
    parser = _Parser(prog="forkjoin-sim", usage="forkjoin-sim [-h] [--version] COMMAND ...",
                     description="Simulate and analyse (n,r,k) fork-join queues.",
                     epilog=_command_list(),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="print the installed version and exit")
    # the grouped list in the epilog is the list of commands; argparse's flat one goes
    # prog: each command's name in its messages is "forkjoin-sim CMD", not the usage line
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser,
                                metavar="COMMAND", help=argparse.SUPPRESS,
                                prog="forkjoin-sim")
    for name, (module, _, text) in COMMANDS.items():
        if every or name == command:
            importlib.import_module(f"forkjoin_cli.{module}").register(sub)
        else:
            sub.add_parser(name, help=text)  # listed, not loaded
    return parser


def _user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean bad input: each library's ConfigError (the closed
    forms' only if the command loaded them)."""
    from forkjoin_sim.errors import ConfigError

    errors: tuple[type[BaseException], ...] = (ConfigError,)
    if "analytic.errors" in sys.modules:
        errors += (sys.modules["analytic.errors"].ConfigError,)
    return errors


def main(argv: list[str] | None = None) -> int:
    from forkjoin_sim.checks import printable, warnings_after_success
    from forkjoin_cli.arguments import check_outputs_spare_inputs, option_names

    closed = _reopen_closed_streams()
    numba_error = _numba_settings_error()
    if numba_error is not None:
        print(f"forkjoin-sim: error: {numba_error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
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
                check_outputs_spare_inputs(args, option_names(parser))
                status = int(args.handler(args) or 0)
                sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
                return status
        except KeyboardInterrupt:
            return _interrupted(args.command, received)
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
        except Exception as exc:  # bad input of either library: one line
            if _interrupt_within(exc):
                return _interrupted(args.command, received)
            if not isinstance(exc, _user_errors()):
                raise
            print(f"forkjoin-sim {args.command}: error: {printable(str(exc))}",
                  file=sys.stderr)
            return EXIT_BAD_INPUT


def _interrupted(command: str, received) -> int:
    """Say that the command was stopped (by which signal, if not Ctrl-C) and return
    its exit status, 128 + the signal."""
    import signal

    signum = received[0] if received else signal.SIGINT
    how = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
    print(f"forkjoin-sim {command}: interrupted{how}", file=sys.stderr)
    return 128 + signum


def _interrupt_within(exc: BaseException) -> bool:
    """Whether ``exc`` carries a KeyboardInterrupt (as its cause or context): a stop
    signal that arrived inside compiled code (numba) comes out as a SystemError
    ("returned a result with an exception set") around it."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


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
