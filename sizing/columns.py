"""The columns of a measurement file (one row per measured configuration), shared by
the CSV reader (`measurements`) and the readers of benchmark output
(`benchmark_formats`)."""

REQUIRED = ("operation", "consistency", "mean_ms")
LOAD = ("threads", "rate")
OPTIONAL = ("throughput", "std_ms", "p50_ms", "p95_ms", "p99_ms", "read_fraction")
COLUMNS = REQUIRED + LOAD + OPTIONAL
PERCENTILE_COLUMNS = ("p50_ms", "p95_ms", "p99_ms")
OPERATIONS = ("read", "write")
#: Most client threads a row may have (each is simulated as one closed-loop client).
MAX_THREADS = 10_000
