"""Reference read sets of ragged-dot (ragged non-contracting lhs dim, rhs group dim).

Row i of the lhs ragged dim belongs to group g when the group sizes before g sum to at most i
and those up to g to more than i (one vector of sizes per combination of the lhs dims before the
ragged dim); it is multiplied with rhs group g over the contracted dims. A row past every group
gives 0 and reads neither lhs nor rhs. The group sizes vector of the row is read whole.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..hlo.model import Instruction
from . import reads


@reads("ragged-dot")
def ragged_dot_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    lhs, rhs, sizes = (o.shape for o in instr.operands)
    lb, rb = tuple(instr.attr("lhs_batch_dims", ())), tuple(instr.attr("rhs_batch_dims", ()))
    lc, rc = tuple(instr.attr("lhs_contracting_dims", ())), tuple(instr.attr("rhs_contracting_dims", ()))
    (r,), (g,) = instr.attr("lhs_ragged_dims"), instr.attr("rhs_group_dims")
    lfree = [d for d in range(lhs.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.rank) if d not in rb and d not in rc and d != g]
    batch = out_point[: len(lb)]
    lhs_coord = dict(zip(lb, batch))
    lhs_coord.update(zip(lfree, out_point[len(lb) : len(lb) + len(lfree)]))
    rhs_coord = dict(zip(rb, batch))
    rhs_coord.update(zip(rfree, out_point[len(lb) + len(lfree) :]))
    leading = tuple(lhs_coord[d] for d in range(r) if d not in lc)
    if operand_index == 2:
        return {leading + (k,) for k in range(sizes.dims[-1])}
    if runtime_values is None or 2 not in runtime_values:
        raise ValueError("ragged-dot needs the runtime value of group_sizes")
    vector = (
        np.asarray(runtime_values[2]).reshape(sizes.dims)[leading]
        if leading
        else np.asarray(runtime_values[2]).reshape(sizes.dims)
    )
    row, end, group = lhs_coord[r], 0, None
    for k, n in enumerate(vector.tolist()):
        end += int(n)
        if row < end:
            group = k
            break
    if group is None:
        return set()
    found = set()
    for contraction in itertools.product(*(range(lhs.dims[d]) for d in lc)):
        if operand_index == 0:
            coord = dict(lhs_coord)
            coord.update(zip(lc, contraction))
            found.add(tuple(coord[d] for d in range(lhs.rank)))
        else:
            coord = dict(rhs_coord)
            coord.update(zip(rc, contraction))
            coord[g] = group
            found.add(tuple(coord[d] for d in range(rhs.rank)))
    return found
