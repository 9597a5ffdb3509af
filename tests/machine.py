"""What a test needs of the machine beyond Python packages (a browser, an MQTT broker).

On a newcomer's machine without it, the test is skipped with the reason and how to install it;
under `.ci/run`, which installs everything, ``MARLIN_TESTS_NEED_ALL`` is set and nothing is skipped
for this reason: a missing program there is a failure.
"""

from __future__ import annotations

import os

import pytest


def needs(present: bool, what: str, install: str):
    """A mark that skips the test when ``what`` is not ``present`` (outside CI), saying how to install it."""
    return pytest.mark.skipif(not present and not os.environ.get("MARLIN_TESTS_NEED_ALL"),
                              reason=f"{what} is not installed on this machine ({install}; .ci/run installs it)")
