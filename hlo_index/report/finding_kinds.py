"""What a fusion reading an operand through several maps *is*, and an identity that survives recompiles.

One of ``build.TARGET_FIGURES``, active only when the options ask for it (``check`` does): each
``output_to_input`` entry with more than one distinct map gets ``extra["finding"]``:

* ``code``: a rule code, selectable like a linter's (see ``RULES``). The benign kinds are told
  apart: the maps cover *disjoint* output regions (each output element reads the operand through
  one map only: pieces of a concatenate, of a pad, or other disjoint regions), or the operand is
  read directly and again through a reduce whose result is broadcast back (softmax, layer norm).
* ``identity``: a digest of the fused computation's *structure* (every instruction's opcode,
  shape, operand positions, attributes, and the same of called computations; no names, no
  metadata), the operand and output numbers and the maps, so a recompile that renames
  everything keeps every finding's identity, and a baseline file can hold them.
"""

from __future__ import annotations

from typing import Any

from ..affine.expr import DIM
from ..context import current, register_table, remember
from ..fusion.fingerprint import computation_digest, finding_identity
from ..hlo.model import Computation
from .model import TargetReport

# code -> (short name, description). HI001 and HI900 fail ``check`` by default.
RULES = {
    "HI001": ("several-maps", "operand read through several distinct maps (some output elements read it twice)"),
    "HI002": ("concatenate-pieces", "several maps over disjoint output regions, through a concatenate"),
    "HI003": ("pad-pieces", "several maps over disjoint output regions, through a pad"),
    "HI004": ("disjoint-pieces", "several maps over disjoint output regions (select, slices, ...)"),
    "HI005": ("broadcast-reread", "operand read directly and again through a reduce broadcast back"),
    "HI006": (
        "concatenate-reread",
        "operand read directly and again through pieces of a concatenate (a rotation: RoPE)",
    ),
    "HI007": (
        "distinct-elements",
        "several maps, but no output element reads an operand element through two of them (separate scalars or rows)",
    ),
    "HI900": ("verify-mismatch", "--verify found an element the maps get wrong"),
}
DEFAULT_SELECT = ("HI001", "HI900")

_DISJOINT_BRUTE_FORCE_LIMIT = 1 << 16
# Per analysis context, at most Budgets.operand_figures entries: ``outputs_disjoint`` by maps
# (structural keys). Repeated fusions ask it of the same maps (40% of ``check``'s time on gpt12).
_DISJOINT = register_table("report.finding_kinds.outputs_disjoint")
_READS_DISJOINT = register_table("report.finding_kinds.reads_disjoint")  # the same for ``reads_disjoint``


def _reached_opcodes(comp: Computation, operand: int) -> set[str]:
    """Opcodes of every instruction that (transitively) uses parameter ``operand`` of ``comp``."""
    start = comp.parameters.get(operand)
    if start is None:
        return set()
    users: dict[int, list] = {}
    for instr in comp.instructions:
        for o in instr.operands:
            users.setdefault(id(o), []).append(instr)
    seen, stack, ops = {id(start)}, [start], set()
    while stack:
        for user in users.get(id(stack.pop()), ()):
            if id(user) not in seen:
                seen.add(id(user))
                ops.add(user.opcode)
                stack.append(user)
    return ops


def _relation(m):
    """``relation_at`` of every point of ``m``'s domain (runtime variables at their lowest), or
    None past the brute-force limit."""
    from ..affine.evaluate import dim_points, relation_at

    size = 1
    for b in list(m.dims) + list(m.range_vars):
        size *= max(b.size, 0)
    if size > _DISJOINT_BRUTE_FORCE_LIMIT:
        return None
    runtime = [rv.interval.lo for rv in m.runtime_vars]
    return relation_at(m, dim_points(m, _DISJOINT_BRUTE_FORCE_LIMIT, 0), runtime)


def _feasible_dims(m) -> set | None:
    relation = _relation(m)
    if relation is None:
        return None
    return set(map(tuple, relation[0][:, : m.num_dims].tolist()))


def _constraints_exclude(a, b) -> bool:
    """Both maps constrain the same expression of the dims to disjoint intervals
    (``d2 mod 32 in [0, 15]`` against ``d2 mod 32 in [16, 31]``)."""
    bounds = dict(a.constraints)
    for expr, iv in b.constraints:
        other = bounds.get(expr)
        if other is not None and (other.hi < iv.lo or iv.hi < other.lo):
            return True
    return False


def _memoised(table: int, decide, maps) -> bool:
    """``decide(tuple(maps))``, memoised by the maps in the context's ``table``."""
    ctx = current()
    memo = ctx.tables[table]
    key = tuple(maps)
    found = memo.get(key)
    if found is None:
        found = remember(memo, key, decide(key), ctx.budgets.operand_figures)
    return found


def outputs_disjoint(maps) -> bool:
    """Whether no output element is in the domain of two of ``maps`` (dim intervals, constraints on
    the same expression, else brute force on small domains; False when it cannot be shown)."""
    return _memoised(_DISJOINT, _outputs_disjoint, maps)


def _outputs_disjoint(maps: tuple) -> bool:
    live = [m for m in maps if not m.is_known_empty]
    if any(m.is_undefined or m.runtime_vars for m in live):
        return False
    for i, a in enumerate(live):
        for b in live[i + 1 :]:
            if any(x.hi < y.lo or y.hi < x.lo for x, y in zip(a.dims, b.dims)):
                continue
            if _constraints_exclude(a, b):
                continue
            fa, fb = _feasible_dims(a), _feasible_dims(b)
            if fa is None or fb is None or fa & fb:
                return False
    return True


def reads_disjoint(maps) -> bool:
    """Whether no output element reads one operand element through two of ``maps`` (a result
    both hold constant at different values, else brute force on small domains; False when it
    cannot be shown)."""
    return _memoised(_READS_DISJOINT, _reads_disjoint, maps)


def _reads_disjoint(maps: tuple) -> bool:
    live = [m for m in maps if not m.is_known_empty]
    if any(m.is_undefined or m.runtime_vars for m in live):
        return False
    pairs: list = [None] * len(live)  # per map, its (output element, operand element) pairs
    for i, a in enumerate(live):
        for j in range(i + 1, len(live)):
            b = live[j]
            if any(_always_apart(x, y) for x, y in zip(a.results, b.results)):
                continue
            for k in (i, j):
                if pairs[k] is None:
                    pairs[k] = _read_pairs(live[k])
            if pairs[i] is False or pairs[j] is False or pairs[i] & pairs[j]:
                return False
    return True


def _always_apart(x, y) -> bool:
    """Whether two result expressions of one output element differ at every element: they differ
    by a nonzero constant (``d1 + 128`` and ``d1``; two constants), with no range variable, whose
    values the two maps choose apart."""
    if any(v.kind != DIM for v in x.variables() | y.variables()):
        return False
    difference = x - y
    return difference.is_constant and difference.constant_value != 0


def _read_pairs(m):
    """Every (output element, operand element) ``m`` relates, or False past the brute-force limit."""
    relation = _relation(m)
    if relation is None:
        return False
    feasible, results = relation
    return set(zip(map(tuple, feasible[:, : m.num_dims].tolist()), map(tuple, results.tolist())))


def classify(maps, comp: Computation | None, operand: int) -> str:
    ops = _reached_opcodes(comp, operand) if comp is not None else set()
    if outputs_disjoint(maps):
        if "concatenate" in ops:
            return "HI002"
        if "pad" in ops:
            return "HI003"
        return "HI004"
    if "reduce" in ops and "broadcast" in ops:
        return "HI005"
    if "concatenate" in ops:
        return "HI006"
    if reads_disjoint(maps):
        return "HI007"
    return "HI001"


def add_finding_kinds(report: TargetReport, target: Any, module: Any, options: dict) -> None:
    if not options.get("check") or report.kind != "fusion":
        return
    several = [e for e in report.output_to_input if e.distinct > 1]
    if not several:
        return
    from ..fusion import callee_of, output_to_input

    comp = callee_of(target)
    if comp is None:
        return
    structure = computation_digest(comp)
    rows = {(r.operand, r.output): r for r in output_to_input(target)}
    for entry in several:
        row = rows.get((entry.operand, entry.output))
        maps_text = tuple(m.text if m.text is not None else f"UNKNOWN ({m.unknown})" for m in entry.maps)
        code = classify(row.maps, comp, entry.operand) if row is not None else "HI001"
        entry.extra["finding"] = {
            "code": code,
            "rule": RULES[code][0],
            "identity": finding_identity(structure, entry.operand, entry.output, maps_text),
        }
