"""``--verify``: check a target's printed maps against the numpy reference, element by element.

For seeded sample elements of every output, the exact set of parameter elements read is computed
by walking the computation backward with each op's reference read-set function
(``hlo_index.reference``, which shares no code with the maps). The maps must give a superset, and
the same set unless the maps carry runtime variables (then they give the union over every feasible
offset, and the reference's read set for one choice of offsets must be inside it).

Input-to-output maps are checked from both sides on samples: every (operand element, output
element) pair the reference walk finds for a sampled output element must be given by the
operand's input-to-output maps, and every output element those maps give for a sampled operand
element (a few of them) must read that operand element according to the reference walk.

Sampling (``samples`` = 8 by default), deterministic: each choice is seeded from what it is about
(an output's or operand's dimensions, the image being sampled; never names, never time), so a run
repeats exactly, and equal questions get equal answers across the targets of a module: walks and
reference read sets are then shared instead of repeated.
* per output: ``samples`` elements, the first and last element plus random ones; for each, every
  operand's exact read set against the output-to-input maps, and up to 4 (operand element,
  output element) pairs per operand against the input-to-output maps;
* per operand: ``max(1, samples // 2)`` elements, the first and last plus random ones; for each
  and each output, up to 4 of the output elements the input-to-output maps give are walked back.
Cost: each computation's post-order and, per set of operands, the instructions that can reach
one of them are found once per target; a walk for some operands (an output element checked
input-to-output for them) visits only those, and a walk from an output of a flat tuple root
only that output's instructions; reference read sets are memoised, per module for ops whose
read sets follow from opcode, shapes and attributes alone; identical fusions of a module (same
structure) are verified once; a map's witness range variables (in no result, constrained with
dims only) are tried per point, not enumerated with the others. A walk holds each set of
elements as one sorted int64 array of row-major linear indices (a reduction's row of 10^6
elements is one array, not 10^6 tuples), compared with the maps' read sets in the same form;
tuples are made only to name a mismatch.

Modules: ``target`` (one target's check), ``pairs`` (input-to-output maps checked from both
sides on sampled pairs), ``walk`` (backward reference walks), ``references`` (the reference's
read sets, one op at a time), ``points`` (what the maps give at a point), ``sampling`` (seeded
choices), ``memos`` (answers shared between a module's targets), ``outcome`` (what is reported).
"""

from __future__ import annotations

from .outcome import Skip, VerifyOutcome
from .pairs import PAIRS_PER_ELEMENT
from .points import predicted_read_set, predicted_rows, predicted_rows_many, runtime_as_range
from .references import SHARED_READS_LIMIT, runtime_values_for
from .target import verify_target
from .walk import backward_read_sets

__all__ = [
    "PAIRS_PER_ELEMENT",
    "SHARED_READS_LIMIT",
    "Skip",
    "VerifyOutcome",
    "backward_read_sets",
    "predicted_read_set",
    "predicted_rows",
    "predicted_rows_many",
    "runtime_as_range",
    "runtime_values_for",
    "verify_target",
]
