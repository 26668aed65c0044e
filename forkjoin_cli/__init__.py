"""The ``forkjoin-sim`` command line: one module per command (see `main.COMMANDS`),
the shared parser and options (`arguments`), and argparse's typed converters
(`types`). No library imports this package; it is the only code that imports argparse."""
