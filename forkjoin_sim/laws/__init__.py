"""Service and delay laws: every law has scipy.stats' interface (``rvs(size,
random_state)``, ``mean()``, ``moment(n)``, ``ppf``, ``cdf``), see `protocol.Law`.

=================  ====================================================
``service``        text specs (``exp``, ``erlang:K``, ``empirical:PATH`` ...) -> laws
``exponential``    the exponential law without importing scipy.stats
``empirical``      measured latencies as a law
``mixture``        a finite mixture of laws
``sumlaw``         the sum of independent laws (a task's total time)
``moments``        which of a law's moments are finite (its tail's weight)
``protocol``       the `Law` protocol every law follows
=================  ====================================================

A new law is one module here; a text spec for it is one entry in ``service``.
"""
