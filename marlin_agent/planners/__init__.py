"""Planners turn a question into verified moments through the tools: the pipeline planner (no
LLM) and the LLM planner."""
