"""sizing: features performance engineers run on their own systems.

They need both the closed forms (``analytic``) and the simulator (``forkjoin_sim``),
which never import each other, so they live here:

==========================  ==================================================
``tails``                   latency percentiles and timeout availability from
                            Theorem 1 on whole distributions
``planning``                the consistency planner (R, W) and the capacity
                            planner (nodes, replicas, level) against an SLA
``measurements``            benchmark summaries (threads, throughput, mean per
                            consistency level) read from CSV
``calibration``             fit a Cassandra cluster model to such summaries and
                            predict other levels, thread counts and clusters
``calibrated_model``        the fitted model and its TOML file
==========================  ==================================================

Their commands (``timeouts``, ``plan-consistency``, ``plan-capacity``, and
``cassandra calibrate`` / ``cassandra predict --model``) join the
``forkjoin-sim`` CLI through the ``forkjoin_sim.commands`` entry point.
"""
