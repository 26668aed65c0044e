"""Validation: the closed forms of ``analytic`` checked against ``forkjoin_sim``."""
