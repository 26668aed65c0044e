"""``forkjoin-sim plan-consistency``: the fastest read/write quorums (R, W) for a mix (shared code in ``_tails``)."""

from forkjoin_cli._tails import register_plan_consistency as register  # noqa: F401


def staleness_plan(args, read_service, write_service):
    """``sizing.staleness_planning.plan_from_args`` with a progress bar over the
    (R, W) pairs on standard error (`forkjoin_cli.staleness.progress_bar`); the
    plan's warnings go to `warnings.warn`, as there."""
    from forkjoin_cli.staleness import progress_bar
    from sizing.staleness_planning import plan_from_args

    with progress_bar(args.replicas ** 2, desc="plan-consistency") as bar:
        counted = [0]

        def progress(done: int, total: int) -> None:
            bar.update(done - counted[0])
            counted[0] = done

        return plan_from_args(args, read_service, write_service, progress=progress)
