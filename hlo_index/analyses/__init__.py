"""Analyses users act on, computed from indexing maps (never re-derived): operand utilization,
coalescing, tile propagation and slice/reshape reorder legality. They return data only."""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import IndexingMap
from ..hlo.model import Shape
from .coalescing import WARP, Coalescing, operand_coalescing
from .utilization import Utilization, operand_utilization, skipped_utilization


def operand_report(
    maps: Sequence[IndexingMap], operand_shape: Shape, output_shape: Shape, seed: int = 0, skip_utilization: str = ""
) -> dict:
    """JSON-ready utilization and coalescing of one operand (e.g. a fusion's ``OperandIndexing``
    row: ``maps=row.maps``, the operand's shape, ``output_shape=target.shape.leaf(row.output)``).

    Keys: ``utilization`` and ``coalescing`` (dicts), plus one-line ``utilization_summary`` and
    ``coalescing_summary`` strings for text output. ``skip_utilization``: the reason utilization
    is not counted (a budget); it is then unknown, saying why.
    """
    if operand_shape.is_tuple or output_shape.is_tuple:
        return {
            "utilization": None,
            "coalescing": None,
            "utilization_summary": "n/a (tuple shape)",
            "coalescing_summary": "n/a (tuple shape)",
        }
    u = (
        skipped_utilization(operand_shape, skip_utilization)
        if skip_utilization
        else operand_utilization(maps, operand_shape, seed=seed)
    )
    c = operand_coalescing(maps, operand_shape, output_shape, seed=seed)
    return {
        "utilization": u.to_json(),
        "coalescing": c.to_json(),
        "utilization_summary": utilization_summary(u),
        "coalescing_summary": coalescing_summary(c),
    }


def utilization_summary(u: Utilization) -> str:
    if u.distinct_elements is None:
        return f"unknown ({u.notes[0] if u.notes else 'undefined map'})"
    exact = "" if u.exact else f" (<= {u.distinct_upper_bound}, sampled)"
    frac = f"{100 * u.fraction:.1f}%" if u.fraction is not None else "-"
    mult = f"{u.multiplicity:.2f}" if u.multiplicity is not None else "-"
    rt = ", union over runtime values" if u.runtime_union else ""
    return (
        f"{u.distinct_elements}/{u.total_elements} elements{exact} ({frac}), "
        f"{u.bytes_read} bytes, {mult} reads/element{rt}"
    )


def coalescing_summary(c: Coalescing) -> str:
    """``contiguous, 1/1 transactions per 32 — coalesced`` (one clause per map)."""
    if not c.per_map:
        return f"{c.verdict} ({c.reason})"
    clauses = []
    for m in c.per_map:
        if m.pattern == "none":
            clauses.append("the sampled output points read nothing of this operand")
            continue
        what = f"strided (stride {m.stride})" if m.pattern == "strided" else m.pattern
        clauses.append(f"{what}, {m.transactions:g}/{m.ideal_transactions:g} transactions per {WARP}")
    return "; ".join(clauses) + f" — {c.verdict}"


__all__ = [
    "operand_report",
    "operand_utilization",
    "operand_coalescing",
    "Utilization",
    "Coalescing",
    "utilization_summary",
    "coalescing_summary",
]
