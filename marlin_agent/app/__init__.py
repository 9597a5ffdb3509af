"""Whole requests the front doors share (CLI, Python API, MCP server): index what is new,
open a client and a planner, answer, cut clips. Front doors parse and render around these.
"""
