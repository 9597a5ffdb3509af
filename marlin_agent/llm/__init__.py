"""Chat LLMs the agent asks: the planner, the judge and the extraction model.

``models`` builds a pydantic-ai model from settings; ``transport`` writes each request in the forms
its server takes and ``profiles`` remembers them; ``structured`` gets one JSON object out of any
model in the most reliable way its server offers; ``replies`` reads JSON out of free text.
"""
