"""Times as people read them."""

import pytest

from marlin_agent.clock import clock


@pytest.mark.parametrize(("seconds", "shown"), [
    (0, "0:00.0"), (5.25, "0:05.2"), (59.94, "0:59.9"), (59.96, "1:00.0"), (119.99, "2:00.0"),
    (131, "2:11.0"), (3599.97, "1:00:00.0"), (3723.5, "1:02:03.5"),
])
def test_clock_rounds_before_it_splits_so_no_field_ever_reads_60(seconds, shown):
    assert clock(seconds) == shown
