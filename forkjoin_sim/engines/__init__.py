"""Engines turn a sample path into per-task completion times."""

from .fast import FastEngine
from .simpy_engine import SimPyEngine

ENGINES = {"fast": FastEngine, "simpy": SimPyEngine}
#: Every engine ``simulate`` takes: the fused one runs whole replications itself.
ENGINE_NAMES = ("fast", "fused", "simpy")

__all__ = ["ENGINES", "ENGINE_NAMES", "FastEngine", "SimPyEngine"]
