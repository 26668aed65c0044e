"""Engines turn a sample path into per-task completion times."""

from forkjoin_sim.engines.fast import FastEngine
from forkjoin_sim.engines.simpy_engine import SimPyEngine

ENGINES = {"fast": FastEngine, "simpy": SimPyEngine}
#: Every engine ``simulate`` takes: the fused one runs whole replications itself.
ENGINE_NAMES = ("fast", "fused", "simpy")

__all__ = ["ENGINES", "ENGINE_NAMES", "FastEngine", "SimPyEngine"]
