"""Eval suites that run against any Marlin server: grounding, presence, search."""
