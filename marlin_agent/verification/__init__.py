"""Verification: evidence for and against a grounded span, and the confidence it adds up to.

Below the tools (the toolbox gathers the evidence through these functions) and above the
models: ``entailment`` runs the NLI model, ``signals`` turns texts into evidence,
``confidence`` combines evidence with calibrated weights.
"""
