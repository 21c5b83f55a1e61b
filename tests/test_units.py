"""How figures read: one formatter for bytes and one for times, shared by every command."""

from __future__ import annotations

import pytest

from hlo_index.units import bytes_text, time_text


@pytest.mark.parametrize(
    "n, text",
    [(0, "0 B"), (999, "999 B"), (1000, "1.0 kB"), (806_500_000, "806.5 MB"), (4.0e9, "4.0 GB"), (-2500, "-2.5 kB")],
)
def test_bytes_read_in_decimal_units(n, text):
    assert bytes_text(n) == text


@pytest.mark.parametrize(
    "us, digits, text",
    [
        (0, 2, "0.00 us"),
        (0.25, 2, "250 ns"),
        (7.04, 1, "7.0 us"),
        (1540.0, 2, "1.54 ms"),
        (73211.41, 2, "73.21 ms"),
        (2_500_000, 2, "2.50 s"),
        (-1540.0, 2, "-1.54 ms"),
        (float("inf"), 2, "inf"),
    ],
)
def test_times_read_in_the_unit_that_fits(us, digits, text):
    assert time_text(us, digits) == text
