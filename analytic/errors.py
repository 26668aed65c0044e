"""The exception raised by the closed forms for invalid arguments.

``analytic`` must not import ``forkjoin_sim`` (the layers are independent), so it has
its own class; both are ``ValueError`` subclasses and the CLI treats both alike.
"""


class ConfigError(ValueError):
    """Invalid arguments to a closed form; the message says how to fix them."""


class CancellationWarning(RuntimeWarning):
    """An alternating Theorem 1 sum lost significant digits to floating-point cancellation.

    The message gives the estimated relative error; pass exact inputs
    (``fractions.Fraction``) to avoid it.
    """
