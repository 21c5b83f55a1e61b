"""What several outputs read of one operand together: the union of their read sets.

A multi-output fusion reads an operand once per output in its maps, each map from that
output's own index space. The operand's distinct elements (and so its bytes read) over the
whole fusion are the elements *some* output reads: the union of the read sets, not the sum.
Each map is re-expressed with its dimensions turned into range variables (a map with no
dimensions whose range covers the same points), so maps of different outputs share one
(empty) index space and ``operand_utilization`` counts their union as it counts one output's maps.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import IndexingMap, dim, range_var
from ..affine.expr import replace_variables
from ..hlo.model import Shape
from .utilization import Utilization, operand_utilization


def _without_dims(m: IndexingMap) -> IndexingMap:
    if m.is_undefined or m.is_known_empty or not m.num_dims:
        return m
    n = m.num_dims
    mapping = {dim(i): range_var(i) for i in range(n)}
    mapping.update({range_var(j): range_var(n + j) for j in range(len(m.range_vars))})
    memo: dict = {}
    return IndexingMap(
        (),
        tuple(m.dims) + tuple(m.range_vars),
        m.runtime_vars,
        [replace_variables(e, mapping.get, memo) for e in m.results],
        [(replace_variables(e, mapping.get, memo), b) for e, b in m.constraints],
    )


def union_utilization(maps_per_output: Sequence[Sequence[IndexingMap]], operand_shape: Shape) -> Utilization:
    """Distinct elements and bytes of ``operand_shape`` read by any of the outputs' maps.

    Only ``distinct_elements``, ``distinct_upper_bound``, ``bytes_read`` and ``fraction`` speak of
    the union; element reads are per output (sum them over the outputs' own figures)."""
    flat = [_without_dims(m) for maps in maps_per_output for m in maps]
    return operand_utilization(flat, operand_shape)
