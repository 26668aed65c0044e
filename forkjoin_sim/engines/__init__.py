"""Engines turn a sample path into per-task completion times."""

from .fast import FastEngine
from .simpy_engine import SimPyEngine

ENGINES = {"fast": FastEngine, "simpy": SimPyEngine}

__all__ = ["ENGINES", "FastEngine", "SimPyEngine"]
