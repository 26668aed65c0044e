"""The fused engine: arrivals, service, queues and statistics in one compiled loop on
every core (`engine` drives it; `kernel` is the numba loop; `laws` encodes service
laws for it; `rng` is its counter-based generator)."""
