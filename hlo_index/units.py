"""How figures read in every command: bytes in decimal units, times from nanoseconds to seconds.

One place, so that a fusion's "1.9 GB read" and "244.4 us" read the same in ``analyze``'s why
line, its tables, ``diff`` and ``check``.
"""

from __future__ import annotations

import math


def bytes_text(n: float) -> str:
    """``n`` bytes in decimal units (kB = 1000 B, as the cost's and XLA's figures count)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def time_text(us: float, digits: int = 2) -> str:
    """``us`` microseconds in the unit that reads best (s, ms, us, ns), ``digits`` decimals."""
    if math.isinf(us):
        return "inf"
    size = abs(us)
    if size >= 1e6:
        return f"{us / 1e6:.{digits}f} s"
    if size >= 1e3:
        return f"{us / 1e3:.{digits}f} ms"
    if size >= 1 or us == 0:
        return f"{us:.{digits}f} us"
    return f"{us * 1e3:.0f} ns"
