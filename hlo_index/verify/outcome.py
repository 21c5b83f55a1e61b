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
    sampled_points: int = 0  # output elements sampled; more than checked where the budget stopped the walks
    unchecked_pairs: int = 0  # input-to-output pairs given by the maps and not walked back: the budget was spent


def point_text(point) -> str:
    return "{" + ", ".join(str(i) for i in point) + "}"
