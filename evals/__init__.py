"""Evaluation suites and the synthetic world they (and the tests) run on."""
