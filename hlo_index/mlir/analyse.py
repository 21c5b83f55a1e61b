"""``bubble`` on MLIR: every extract_slice / expand_shape / collapse_shape pair, its verdict
(legal | illegal | conditional | unprovable), the condition, a counterexample, and the swapped pair
as MLIR."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from .decide import GroupResult, Spec, decide
from .emit import Emitter, reshape_line, slice_line, tensor_type
from .pairs import SLICE_FIRST, Pair, find_pairs
from .parse import ParsedModule, parse_mlir
from .symbolic import TRUE, Expr, Sym, all_of, product


@dataclass(frozen=True)
class MlirChain:
    function: str
    slice: str
    reshape: str
    order: str
    direction: str
    verdict: str
    reason: str
    condition: str | None = None
    rewrite: str | None = None
    counterexample: dict | None = None

    @property
    def computation(self) -> str:
        return self.function

    def to_json(self) -> dict:
        return {
            "function": self.function,
            "slice": self.slice,
            "reshape": self.reshape,
            "order": self.order,
            "direction": self.direction,
            "verdict": self.verdict,
            "reason": self.reason,
            "condition": self.condition,
            "rewrite": self.rewrite,
            "counterexample": self.counterexample,
        }


class _PairNames(TypedDict):
    """The fields of ``MlirChain`` that name the pair."""

    function: str
    slice: str
    reshape: str
    order: str
    direction: str


def analyse_mlir_text(text: str, path: str = "<input>") -> list[MlirChain]:
    """Raises ``MlirError`` (with path:line:col) when the text does not parse."""
    return analyse_parsed(parse_mlir(text, path))


def analyse_parsed(parsed: ParsedModule) -> list[MlirChain]:
    taken = set(parsed.names.values())
    types = {"%" + name: str(v.type) for v, name in parsed.names.items()}
    return [analyse_pair(p, taken, types) for p in find_pairs(parsed)]


def analyse_pair(pair: Pair, taken: set[str], types: dict[str, str]) -> MlirChain:
    names: _PairNames = {
        "function": pair.function,
        "slice": pair.slice_name,
        "reshape": pair.reshape_name,
        "order": pair.order,
        "direction": pair.direction,
    }
    if pair.error:
        return MlirChain(**names, verdict="unprovable", reason=f"the pair could not be modelled: {pair.error}")
    results = [decide(pair.order, g) for g in pair.groups]
    where = [_group_text(pair, g) for g in pair.groups]
    for r, w in zip(results, where):
        if r.verdict == "illegal":
            return MlirChain(**names, verdict="illegal", reason=f"{w}: {r.reason}", counterexample=r.counterexample)
    for r, w in zip(results, where):
        if r.verdict == "unprovable":
            return MlirChain(**names, verdict="unprovable", reason=f"{w}: {r.reason}")
    cond = all_of(*(r.condition for r in results))
    verdict = "legal" if cond == TRUE else "conditional"
    reasons = [f"{w}: {r.reason}" for r, w in zip(results, where) if r.reason and not r.reason.startswith("a dim the")]
    reason = "; ".join(reasons)
    rewrite, note = _rewrite(pair, results, taken, types)
    if note:
        reason += f" (no rewrite: {note})"
    counter = next((r.counterexample for r in results if r.counterexample), None)
    return MlirChain(
        **names,
        verdict=verdict,
        reason=reason,
        condition=None if cond == TRUE else str(cond),
        rewrite=rewrite,
        counterexample=counter if verdict == "conditional" else None,
    )


def _group_text(pair: Pair, g) -> str:
    dims = "x".join(str(d) for d in g.x)
    return f"source dim{'s' if len(g.x) > 1 else ''} {g.x_index} ({dims})"


def _rewrite(pair: Pair, results: list[GroupResult], taken, types) -> tuple[str | None, str]:
    for r in results:
        if r.rewrite_note:
            return None, r.rewrite_note
        if r.new_slice is None or (pair.order == SLICE_FIRST and r.new_dims is None):
            return None, "no swapped form was built for a group"
    em = Emitter(taken, types)
    result = pair.result_name
    if pair.order == SLICE_FIRST:
        dims: list[Expr] = []
        groups: list[list[int]] = []
        spec: Spec = []
        for r in results:
            assert r.new_dims is not None and r.new_slice is not None  # checked above
            groups.append(list(range(len(dims), len(dims) + len(r.new_dims))))
            dims.extend(r.new_dims)
            spec.extend(r.new_slice)
        source, source_type, cast = pair.source_name, pair.source_type, None
        if pair.kind == "expand":
            # MLIR wants a source dim dynamic when a dim it expands into is: cast it first
            loose = [
                Sym("?") if any(dims[i].constant is None for i in grp) else x for x, grp in zip(pair.x_dims, groups)
            ]
            if loose != pair.x_dims:
                source, source_type = em.fresh("cast"), tensor_type(loose, pair.element)
                cast = f"{source} = tensor.cast {pair.source_name} : {pair.source_type} to {source_type}"
        if len(dims) != len(pair.x_dims):
            mid = em.fresh("reshaped")
            mid_type = tensor_type(dims, pair.element)
            first = reshape_line(
                em,
                mid,
                pair.kind,
                source,
                groups if pair.kind == "expand" else _collapse_groups(pair, results),
                source_type,
                dims,
                pair.element,
            )
        else:
            mid, mid_type, first, cast = pair.source_name, pair.source_type, None, None
        second = slice_line(em, result, mid, spec, mid_type, pair.result_type)
        lines = em.lines + [line for line in (cast, first) if line] + [second]
        return "\n".join(lines), ""
    # reshape first: slice the source box, then reshape it to the result
    spec, box_dims, reassoc = [], [], []
    for g, r in zip(pair.groups, results):
        assert r.new_slice is not None  # checked above
        if pair.kind == "expand":
            ((o, n, s),) = r.new_slice
            if g.z_index:  # the box is as long as the dims it expands into (static when they are)
                n = product(g.z)
                reassoc.append(list(g.z_index))
                box_dims.append(n)
            spec.append((o, n, s))
        else:
            spec.extend(r.new_slice)
            if g.z_index:
                reassoc.append(list(range(len(box_dims), len(box_dims) + len(g.x))))
                box_dims.extend(t[1] for t in r.new_slice)
    if len(box_dims) == len(pair.z_dims):
        line = slice_line(em, result, pair.source_name, spec, pair.source_type, pair.result_type)
        return "\n".join(em.lines + [line]), ""
    mid = em.fresh("sliced")
    mid_type = tensor_type(box_dims, pair.element)
    first = slice_line(em, mid, pair.source_name, spec, pair.source_type, mid_type)
    second = reshape_line(em, result, pair.kind, mid, reassoc, mid_type, pair.z_dims, pair.element)
    return "\n".join(em.lines + [first, second]), ""


def _collapse_groups(pair: Pair, results) -> list[list[int]]:
    """Slice then collapse, swapped: collapse the source by the groups' source dims."""
    return [list(g.x_index) for g in pair.groups]
