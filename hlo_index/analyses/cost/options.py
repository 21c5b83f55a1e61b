"""What a user asks of the cost model: a module of its own, so that a command can hold the
options without importing the models (``target_cost`` imports them when a cost is computed)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TargetCostOptions:
    """What the user asked: ``target`` gpu | cpu | auto; ``device`` a name or ``.txtpb`` path;
    ``roofline`` (peak FLOP/s, bytes/s) for CPU / TPU modules; ``cost_model`` classic | indexing;
    ``tile`` output tile sizes or "auto"; ``launch`` (blocks, threads per block);
    ``consumers`` / ``multi_output``: the fusion what-if (``None``: no what-if)."""

    target: str = "auto"
    device: str | None = None
    roofline: tuple[float, float] | None = None
    cost_model: str = "classic"
    tile: Sequence[int] | str | None = None  # sizes, or "auto"
    launch: tuple[int, int] | None = None
    count_multiple_input_accesses: bool = True
    consumers: tuple[str, ...] | None = None
    multi_output: bool = False
    exact: bool = True  # the exact figures from the maps (the report layer may have them already)
    time_uses: str = "xla"  # "exact": the time from the exact figures (``exact["time_us"]``)
