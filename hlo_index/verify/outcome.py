"""What a verification found: mismatches, notes on skipped checks, the counts checked."""

from __future__ import annotations

from dataclasses import dataclass, field


class Skip(Exception):
    """Verification of this target is not possible (no reference for an op, too large)."""


@dataclass
class VerifyOutcome:
    errors: list[str] = field(default_factory=list)  # mismatches, each naming the element
    notes: list[str] = field(default_factory=list)  # skipped targets and why
    checked_points: int = 0
    checked_input_points: int = 0  # operand elements checked input-to-output


def point_text(point) -> str:
    return "{" + ", ".join(str(i) for i in point) + "}"
