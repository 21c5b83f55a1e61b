"""A map's JSON (schema ``hlo-index-map/1``), as ``simplify`` and ``compose`` print it."""

from __future__ import annotations

from ..affine import IndexingMap

SCHEMA = "hlo-index-map/1"


def map_to_json(m: IndexingMap) -> dict:
    """Data-only description of a map."""
    if m.is_undefined:
        return {"map": str(m), "undefined": True, "reason": m.undefined_reason}
    if m.is_known_empty:
        return {"map": str(m), "known_empty": True, "num_dims": m.num_dims, "num_results": m.num_results}
    return {
        "map": str(m),
        "mlir": m.to_mlir(),
        "dims": [[b.lo, b.hi] for b in m.dims],
        "range_vars": [[b.lo, b.hi] for b in m.range_vars],
        "runtime_vars": [[v.interval.lo, v.interval.hi] for v in m.runtime_vars],
        "results": [str(e) for e in m.results],
        "constraints": [{"expr": str(e), "interval": [b.lo, b.hi]} for e, b in m.constraints],
        "known_empty": False,
        "undefined": False,
    }


def map_document(m: IndexingMap) -> dict:
    return {"schema": SCHEMA, **map_to_json(m)}
