"""Local engines: install, start, stop and find the servers that run Marlin on this machine."""

from marlin_agent.engines.local import ensure_server, planner_engine, with_local_planner, with_server
from marlin_agent.engines.machine import Platform, detect_platform
from marlin_agent.engines.manager import EngineManager, EngineState, EngineStatus
from marlin_agent.engines.recipes import Launch, recipe, recipes

__all__ = ["EngineManager", "EngineState", "EngineStatus", "Launch", "Platform", "detect_platform",
           "ensure_server", "planner_engine", "recipe", "recipes", "with_local_planner", "with_server"]
