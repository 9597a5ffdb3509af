"""Planners turn a question into verified moments: the pipeline planner (no LLM) and, later, an LLM planner."""
