"""The synthetic world: footage with known events and a Marlin simulator.

Both are test instruments. The simulator is never a default backend and never answers a
user's real question; the footage exists so tests and evals know the truth.
"""
