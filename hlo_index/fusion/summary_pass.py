"""What the two one-pass summaries (``summaries``: every output at once; ``output_summaries``:
every parameter at once) share: a summary maps one value's index space to each endpoint
(parameter or root output) it reaches, and a pass composes summaries with op maps (``through``)
and joins them (``merge_summaries``) under one budget (``PassBudget``).

Work is bounded (``hlo_index.context.Budgets``), and a budget hit degrades one value, not the pass.
A value whose summary reaches more than ``endpoints_per_value`` endpoints (every value downstream
of a big model's loss reaches nearly every weight) becomes a :class:`Collapsed` summary: the exact
set of endpoints it reaches, each through one UNDEFINED map naming the budget and the value. Past
``compositions_per_pass`` compositions in one computation, the values not yet summarised collapse
the same way; a value reached through more than ``maps_per_value`` patterns is UNDEFINED too.
Composing an UNDEFINED map gives UNDEFINED, so a collapsed summary passes through every op as it
is and costs one set union per merge instead of one composition per endpoint.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeAlias, TypeVar, Union, final

from ..affine import IndexingMap, Interval
from ..context import budget_reason, current, register_table
from ..hlo.model import Computation, Instruction
from .mapset import Maps, distinct, union
from .rule_cache import full_box
from .walk import blame, compose_step

# An endpoint: a (parameter number, tuple element) pair, or a root output index.
_Endpoint = TypeVar("_Endpoint", int, tuple[int, int])


@final  # summaries tell it from a dict by `type(s) is Collapsed`
class Collapsed(Generic[_Endpoint]):
    """A summary past ``endpoints_per_value``: every key it reaches, each read through the same
    UNDEFINED map (immutable: values share it as they share dicts)."""

    __slots__ = ("keys", "maps")

    def __init__(self, keys: frozenset[_Endpoint], maps: Maps) -> None:
        self.keys: frozenset[_Endpoint] = keys
        self.maps = maps

    def __len__(self) -> int:
        return len(self.keys)

    def items(self) -> Iterator[tuple[_Endpoint, Maps]]:
        return ((key, self.maps) for key in self.keys)

    def __contains__(self, key: object) -> bool:
        return key in self.keys

    def __getitem__(self, key: _Endpoint) -> Maps:
        if key not in self.keys:
            raise KeyError(key)
        return self.maps

    def joined(self, other: Summary[_Endpoint]) -> Collapsed[_Endpoint]:
        """This summary with every key of ``other`` (a dict or Collapsed) read through its map."""
        keys: Iterable[_Endpoint] = other.keys if isinstance(other, Collapsed) else other.keys()
        if self.keys.issuperset(keys):
            return self
        return Collapsed(self.keys.union(keys), self.maps)


# endpoint -> maps from one value to it; or Collapsed
Summary: TypeAlias = Union[dict[_Endpoint, Maps], Collapsed[_Endpoint]]  # noqa: UP007  subscripted at run time


class PassBudget:
    """The compositions left for one pass, and the pass's memo of (summary map, op map) pairs."""

    __slots__ = ("left", "reason", "done")

    def __init__(self, comp: Computation) -> None:
        self.done: dict[tuple[int, int], tuple[IndexingMap, IndexingMap, IndexingMap]] = {}
        self.left = limit = current().budgets.compositions_per_pass
        self.reason = budget_reason(
            "compositions_per_pass",
            limit,
            f"analysis of '{comp.name}' stopped composing maps (too many distinct access paths)",
        )


def capped(acc: Summary[_Endpoint], instr: Instruction, what: str, budget: PassBudget) -> Summary[_Endpoint]:
    """``acc``, or ``acc`` collapsed when it reaches more than ``endpoints_per_value`` keys or
    when the pass has spent its ``compositions_per_pass`` (the values left are not summarised)."""
    if type(acc) is not dict or not acc:
        return acc
    if budget.left <= 0:
        return Collapsed(frozenset(acc), (IndexingMap.undefined(budget.reason),))
    limit = current().budgets.endpoints_per_value
    if len(acc) <= limit:
        return acc
    reason = budget_reason(
        "endpoints_per_value", limit, f"'{instr.name}' depends on {len(acc)} {what}; its maps are not composed"
    )
    return Collapsed(frozenset(acc), (IndexingMap.undefined(reason),))


# A summary map whose results and constraints use no dimension (it reads the same parameter
# elements whatever element of its value is asked) composes with any total op map by taking the
# op map's domain: no composition or simplification needed.
# Identity memos per analysis context: id(map) -> (map, answer), the map kept and checked.
_REDOMAINED = register_table("fusion.summary_pass.redomained")
_TOTAL = register_table("fusion.summary_pass.total")


def _dim_free(m: IndexingMap, value_dims: tuple[int, ...]) -> bool:
    return (
        not m.is_undefined
        and not m.is_known_empty
        and not m.runtime_vars
        and not m.uses_dims
        and m.dims == full_box(value_dims)
    )


def _total(r: IndexingMap) -> bool:
    """Every point of ``r``'s domain has an image (no constraints to fail, no empty range)."""
    memo: dict[int, tuple[IndexingMap, bool]] = current().tables[_TOTAL]
    hit = memo.get(id(r))
    if hit is None or hit[0] is not r:
        total = (
            not r.constraints
            and not r.runtime_vars
            and not r.is_undefined
            and not r.is_known_empty
            and all(iv.size > 0 for iv in (*r.dims, *r.range_vars))
        )
        hit = memo[id(r)] = (r, total)
    return hit[1]


def _redomained(m: IndexingMap, dims: tuple[Interval, ...]) -> IndexingMap:
    key = (id(m), dims)
    memo: dict[tuple[int, tuple[Interval, ...]], tuple[IndexingMap, IndexingMap]] = current().tables[_REDOMAINED]
    hit = memo.get(key)
    if hit is not None and hit[0] is m:
        return hit[1]
    s = m.simplified()
    if s.is_known_empty:
        out = IndexingMap.known_empty(len(dims), s.num_results, len(s.range_vars))
    else:
        out = s.with_dims(dims)  # dim-free: as simplified as s is
    memo[key] = (m, out)
    return out


def _compose(
    summary_map: IndexingMap, op_map: IndexingMap, instr: Instruction, value_dims: tuple[int, ...], budget: PassBudget
) -> IndexingMap:
    """``summary_map ∘ op_map``: from ``instr``'s output, through its operand (``value_dims``)."""
    key = (id(summary_map), id(op_map))
    hit = budget.done.get(key)
    if hit is not None and hit[0] is summary_map and hit[1] is op_map:
        return hit[2]
    out = _compose_new(summary_map, op_map, instr, value_dims, budget)
    if not out.is_undefined:  # UNDEFINED reasons name the instruction
        budget.done[key] = (summary_map, op_map, out)
    return out


def _compose_new(
    summary_map: IndexingMap, op_map: IndexingMap, instr: Instruction, value_dims: tuple[int, ...], budget: PassBudget
) -> IndexingMap:
    if summary_map.is_undefined:
        return summary_map
    if op_map.is_undefined:
        return IndexingMap.undefined(blame(instr, op_map.undefined_reason))
    if summary_map.is_known_empty or op_map.is_known_empty:
        return IndexingMap.known_empty(op_map.num_dims, summary_map.num_results)
    if _total(op_map) and _dim_free(summary_map, value_dims):
        return _redomained(summary_map, op_map.dims)
    if budget.left <= 0:
        return IndexingMap.undefined(budget.reason)
    budget.left -= 1
    return compose_step(summary_map, op_map, instr, value_dims)


def through(
    src: Summary[_Endpoint], op_maps: Maps, instr: Instruction, value_dims: tuple[int, ...], budget: PassBudget
) -> Summary[_Endpoint]:
    """Every entry of ``src`` composed with ``op_maps``; one map tuple shared by several entries
    (values pass their sets along unchanged) is composed once. UNDEFINED composed with anything is
    UNDEFINED: a collapsed summary goes through unchanged."""
    if type(src) is Collapsed:
        return src
    out: dict[_Endpoint, Maps] = {}
    done: dict[int, tuple[Maps, Maps]] = {}
    for key, maps in src.items():
        hit = done.get(id(maps))
        if hit is None:
            hit = done[id(maps)] = (
                maps,
                distinct([_compose(m, r, instr, value_dims, budget) for r in op_maps for m in maps]),
            )
        out[key] = hit[1]
    return out


def merge_summaries(
    acc: Summary[_Endpoint] | None, shared: bool, contrib: Summary[_Endpoint]
) -> tuple[Summary[_Endpoint], bool]:
    """``acc ∪ contrib``; ``shared`` says ``acc`` is another value's dict (copy before writing)."""
    if acc is None:
        return contrib, True
    if contrib is acc or not contrib:
        return acc, shared
    # Collapsed absorbs: a key's known maps joined with UNDEFINED are UNDEFINED (never "not read")
    if type(acc) is Collapsed:
        return acc.joined(contrib), True
    if type(contrib) is Collapsed:
        return contrib.joined(acc), True
    if shared:
        acc = dict(acc)
    for key, maps in contrib.items():
        prev = acc.get(key)
        acc[key] = maps if prev is None else union(prev, maps)
    return acc, False
