"""What the two one-pass summaries (``summaries``: every output at once; ``output_summaries``:
every parameter at once) share: a summary maps one value's index space to each endpoint
(parameter or root output) it reaches, and a pass composes summaries with op maps (``through``)
and joins them (``merge_summaries``) under one budget (``PassBudget``).

Work is bounded (``hlo_index.context.Budgets``), and a budget hit degrades one value, not the pass.
A value whose summary reaches more than ``endpoints_per_value`` endpoints (every value downstream
of a big model's loss reaches nearly every weight) becomes a :class:`Wide` summary, in three exact
parts: the endpoints it reads whole (full reads, ``full_read``: bare keys, no map composed), the
others with their maps while they are reached through at most ``endpoints_per_value`` distinct map
sets (a pass composes a set once per op, however many endpoints share it: an optimizer's flag read
elementwise by every update costs one; a set of UNDEFINED maps alone costs none, and while the
other sets stay within the budget its endpoints keep their own reason) and number at most
``exact_endpoints_per_value``, and past that, each through one UNDEFINED map naming the budget and the value. Past
``compositions_per_pass`` compositions in one computation, the values not yet summarised keep
their full reads and the rest becomes UNDEFINED the same way; a value reached through more than
``maps_per_value`` patterns is UNDEFINED too. Composing an UNDEFINED map gives UNDEFINED, so the
unknown part passes through every op as it is; the full reads pass through every op whose map
covers the value (every element reads something), and a join with a full read is the full read
(an unknown map among them too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeAlias, TypeVar, Union, final

from ..affine import IndexingMap, Interval
from ..context import budget_reason, current, register_table
from ..hlo.model import Computation, Instruction
from .bound_witnesses import eliminate_bound_witnesses
from .full_read import covers, full_read, is_full_read, reads_all, reads_whole, region_read
from .mapset import Maps, compaction_threshold, distinct, finalize, is_overflow, union
from .rule_cache import full_box
from .walk import blame, compose_step

# An endpoint: a (parameter number, tuple element) pair, or a root output index.
_Endpoint = TypeVar("_Endpoint", int, tuple[int, int])

Dims = tuple[int, ...]


@final  # summaries tell it from a dict by `type(s) is Wide`
class Wide(Generic[_Endpoint]):
    """A summary past ``endpoints_per_value``, in disjoint exact parts: ``whole``, the endpoints
    every element of the value reads whole; ``regions``, groups of endpoints each read whole on
    one region (maps from the value to ``()``: the elements that read them whole); ``exact``,
    others with their maps (through at most ``endpoints_per_value`` distinct map sets);
    ``unknown``, the rest, each read
    through the UNDEFINED ``maps``, of which ``covered`` are read whole by the value's elements
    together (what an element reads is unknown; all of them read everything: a full reduction of
    the value reads them whole). Immutable (values share it as they share dicts)."""

    __slots__ = ("whole", "regions", "exact", "unknown", "maps", "covered")

    def __init__(
        self,
        whole: frozenset[_Endpoint],
        regions: tuple[tuple[Maps, frozenset[_Endpoint]], ...],
        exact: dict[_Endpoint, Maps],
        unknown: frozenset[_Endpoint],
        maps: Maps,
        covered: frozenset[_Endpoint] = frozenset(),
    ) -> None:
        self.whole: frozenset[_Endpoint] = whole
        self.regions: tuple[tuple[Maps, frozenset[_Endpoint]], ...] = regions
        self.exact: dict[_Endpoint, Maps] = exact
        self.unknown: frozenset[_Endpoint] = unknown
        self.maps = maps
        self.covered: frozenset[_Endpoint] = covered

    def __len__(self) -> int:
        return len(self.whole) + sum(len(k) for _, k in self.regions) + len(self.exact) + len(self.unknown)

    def __contains__(self, key: object) -> bool:
        return (
            key in self.whole
            or key in self.exact
            or key in self.unknown
            or any(key in keys for _, keys in self.regions)
        )


# endpoint -> maps from one value to it; or Wide
Summary: TypeAlias = Union[dict[_Endpoint, Maps], Wide[_Endpoint]]  # noqa: UP007  subscripted at run time


class PassBudget:
    """The compositions left for one pass, the pass's memos of (summary map, op map) pairs and of
    (summary set, op maps) pairs, and the shape of each endpoint (what a full read of it reads)."""

    __slots__ = ("left", "reason", "done", "sets", "endpoint_dims", "whole_absorbs")

    def __init__(self, comp: Computation, endpoint_dims: Callable[[Any], Dims]) -> None:
        self.done: dict[tuple[int, int], tuple[IndexingMap, IndexingMap, IndexingMap]] = {}
        # (id(op maps), ids of a set's maps) -> (op maps, set, composed set)
        self.sets: dict[tuple[int, ...], tuple[Maps, Maps, Maps]] = {}
        self.left = limit = current().budgets.compositions_per_pass
        self.reason = budget_reason(
            "compositions_per_pass",
            limit,
            f"analysis of '{comp.name}' stopped composing maps (too many distinct access paths)",
        )
        self.endpoint_dims: Callable[[Any], Dims] = endpoint_dims
        # Outside fusions (a whole ENTRY, a loop body analysed as a whole), a join with a full read
        # is that full read; a fused computation's sets stay as XLA lists them (piece by piece)
        # until they grow past the compaction threshold.
        self.whole_absorbs = not comp.is_fused


def _split(
    acc: dict[_Endpoint, Maps], value_dims: Dims, budget: PassBudget
) -> tuple[set[_Endpoint], dict[_Endpoint, Maps]]:
    """``acc``'s endpoints read whole, and the others with their maps."""
    whole: set[_Endpoint] = set()
    exact: dict[_Endpoint, Maps] = {}
    for key, maps in acc.items():
        if reads_whole(maps, value_dims, budget.endpoint_dims(key)):
            whole.add(key)
        else:
            exact[key] = maps
    return whole, exact


def _map_sets(exact: dict[_Endpoint, Maps], limit: int) -> int:
    """The distinct sets of map objects ``exact``'s endpoints are reached through, counted up to
    ``limit + 1``: endpoints reached through one set (a flag read elementwise by every update of an
    optimizer) are composed once per op (``PassBudget`` memoises compositions by map identity).
    A set of UNDEFINED maps alone is not counted: composing it composes nothing (it goes through
    every op as it is), so it never puts a value past the budget."""
    objects = len(set(map(id, exact.values())))  # one set object is one set (counted in C)
    if objects <= limit:
        return objects
    seen: set[tuple[int, ...]] = set()
    for maps in exact.values():
        if all(m.is_undefined for m in maps):
            continue
        seen.add(tuple(map(id, maps)))
        if len(seen) > limit:
            break
    return len(seen)


def _within(exact: dict[_Endpoint, Maps], limit: int) -> bool:
    """``exact`` may stay composed: at most ``limit`` distinct map sets, and at most
    ``exact_endpoints_per_value`` endpoints in all."""
    if len(exact) <= limit:
        return True
    return len(exact) <= current().budgets.exact_endpoints_per_value and _map_sets(exact, limit) <= limit


def _exceeded(exact: dict[_Endpoint, Maps], limit: int) -> tuple[str, int]:
    """The budget an ``exact`` part past ``_within`` exceeds: its name and value."""
    total = current().budgets.exact_endpoints_per_value
    return ("exact_endpoints_per_value", total) if len(exact) > total else ("endpoints_per_value", limit)


def capped(
    acc: Summary[_Endpoint], instr: Instruction, value_dims: Dims, what: str, budget: PassBudget
) -> Summary[_Endpoint]:
    """``acc``, or ``acc`` made Wide when it reaches more than ``endpoints_per_value`` keys, its
    exact part made unknown when it is reached through more distinct map sets than that (or has
    more than ``exact_endpoints_per_value`` keys), its regions cut to the budget, or, once the pass
    has spent its ``compositions_per_pass``, its exact part made unknown (the values left are not
    summarised)."""
    if not acc:
        return acc
    spent = budget.left <= 0
    limit = current().budgets.endpoints_per_value
    if type(acc) is Wide:
        if (not acc.exact or (not spent and _within(acc.exact, limit))) and len(acc.regions) <= limit:
            return acc
        whole, regions, exact, unknown, maps = acc.whole, acc.regions, acc.exact, acc.unknown, acc.maps
        covered = acc.covered
    else:
        if len(acc) <= limit and not spent:
            return acc
        whole_keys, exact = _split(acc, value_dims, budget)
        whole, regions, unknown, maps, covered = frozenset(whole_keys), (), frozenset(), (), frozenset()
    if spent:
        reason = budget.reason
    else:
        count = len(whole) + sum(len(k) for _, k in regions) + len(exact) + len(unknown)
        name, value = _exceeded(exact, limit)
        reason = budget_reason(name, value, f"'{instr.name}' depends on {count} {what}; its maps are not composed")
    if exact and (spent or not _within(exact, limit)):
        unknown = unknown.union(exact)
        covered = covered.union(
            key
            for key, key_maps in exact.items()
            if any(reads_all(m, value_dims, budget.endpoint_dims(key)) for m in key_maps)
        )
        exact = {}
    if len(regions) > limit:
        unknown = unknown.union(*(keys for _, keys in regions[limit:]))
        regions = regions[:limit]
    if unknown and not maps:
        maps = (IndexingMap.undefined(reason),)
    return Wide(whole, regions, exact, unknown, maps, covered)


def read_out(summary: Summary[_Endpoint], value_dims: Dims, budget: PassBudget) -> dict[_Endpoint, Maps]:
    """Endpoint -> maps of a finished value: a Wide summary's full reads and region reads made maps."""
    if type(summary) is not Wide:
        return summary
    out: dict[_Endpoint, Maps] = dict(summary.exact)
    for key in summary.whole:
        out[key] = (full_read(value_dims, budget.endpoint_dims(key)),)
    for regions, keys in summary.regions:
        for key in keys:
            dims = budget.endpoint_dims(key)
            out[key] = distinct(region_read(region, dims) for region in regions)
    for key in summary.unknown:
        out[key] = summary.maps
    return out


# A summary map whose results and constraints use no dimension (it reads the same parameter
# elements whatever element of its value is asked) composes with any total op map by taking the
# op map's domain: no composition or simplification needed.
# Identity memos per analysis context: id(map) -> (map, answer), the map kept and checked.
_REDOMAINED = register_table("fusion.summary_pass.redomained")
_TOTAL = register_table("fusion.summary_pass.total")


def _dim_free(m: IndexingMap, value_dims: tuple[int, ...]) -> bool:
    return not m.is_undefined and not m.is_known_empty and not m.uses_dims and m.dims == full_box(value_dims)


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
    composed = compose_step(summary_map, op_map, instr, value_dims)
    # outside fusions, a prefix of a prefix is one prefix (no witness left per composition)
    return eliminate_bound_witnesses(composed, every=True) if budget.whole_absorbs else composed


def _through_dict(
    src: dict[_Endpoint, Maps], op_maps: Maps, instr: Instruction, value_dims: Dims, budget: PassBudget
) -> dict[_Endpoint, Maps]:
    out: dict[_Endpoint, Maps] = {}
    done: dict[int, tuple[Maps, Maps]] = {}
    sets = budget.sets
    # one map through one op map (most entries): the set of one map is that map
    single = len(op_maps) == 1 and current().budgets.maps_per_value >= 1
    maps: Maps
    for key, maps in src.items():
        hit = done.get(id(maps))
        if hit is None:
            if single and len(maps) == 1:
                composed: Maps = (_compose(maps[0], op_maps[0], instr, value_dims, budget),)
            else:
                # sets of the same map objects (joins build equal sets apart, one per endpoint):
                # composed once per op map set; the memo keeps the objects, so their ids stay theirs
                members = (id(op_maps), *map(id, maps))
                found = sets.get(members)
                if found is None or found[0] is not op_maps or any(a is not b for a, b in zip(found[1], maps)):
                    composed = distinct([_compose(m, r, instr, value_dims, budget) for r in op_maps for m in maps])
                    if not any(m.is_undefined for m in composed):  # UNDEFINED reasons name the instruction
                        sets[members] = (op_maps, maps, composed)
                else:
                    composed = found[2]
            hit = done[id(maps)] = (maps, composed)
        out[key] = hit[1]
    return out


def _settle(
    groups: Iterable[tuple[Maps, frozenset[_Endpoint]]],
    whole: frozenset[_Endpoint],
    unknown: frozenset[_Endpoint],
    maps: Maps,
    own_dims: Dims,
) -> tuple[frozenset[_Endpoint], tuple[tuple[Maps, frozenset[_Endpoint]], ...], frozenset[_Endpoint], Maps]:
    """Region groups sorted out: a group whose region is the whole value joins ``whole``, one whose
    region is unknown joins ``unknown``; groups of one region object are one group."""
    kept: dict[int, tuple[Maps, frozenset[_Endpoint]]] = {}
    for regions, keys in groups:
        if not keys:
            continue
        undefined = [m for m in regions if m.is_undefined]
        if undefined:
            unknown = unknown | keys
            maps = maps or (undefined[0],)
        elif reads_whole(regions, own_dims, ()):
            whole = whole | keys
        else:
            hit = kept.get(id(regions))
            kept[id(regions)] = (regions, keys if hit is None else hit[1] | keys)
    return whole, tuple(kept.values()), unknown, maps


def through(
    src: Summary[_Endpoint],
    op_maps: Maps,
    instr: Instruction,
    value_dims: Dims,
    own_dims: Dims,
    budget: PassBudget,
) -> Summary[_Endpoint]:
    """Every entry of ``src`` composed with ``op_maps`` (from ``own_dims``, the new value's shape,
    into ``value_dims``); one map tuple shared by several entries (values pass their sets along
    unchanged) is composed once. A Wide summary's unknown part goes through unchanged (UNDEFINED
    composed with anything is UNDEFINED), and so do its full reads when some op map covers the new
    value (every element of it reads at least one element of the old); else they are read whole on
    the region the op maps give, and regions are composed like maps."""
    if type(src) is not Wide:
        return _through_dict(src, op_maps, instr, value_dims, budget)
    unknown, covered, exact_in = src.unknown, src.covered, src.exact
    whole = src.whole
    if src.covered or src.exact:
        if any(is_full_read(r, own_dims, value_dims) for r in op_maps):
            # every new element reads all of the value: what the value reads in all, each reads
            spread = {
                k
                for k, maps in exact_in.items()
                if any(reads_all(m, value_dims, budget.endpoint_dims(k)) for m in maps)
            }
            whole = whole | covered | spread
            unknown = unknown - covered
            covered = frozenset()
            exact_in = {k: maps for k, maps in exact_in.items() if k not in spread}
        elif covered and not any(reads_all(r, own_dims, value_dims) for r in op_maps):
            covered = frozenset()  # the new value may not read all of the old one
    exact = _through_dict(exact_in, op_maps, instr, value_dims, budget) if exact_in else exact_in
    covering = any(covers(r, own_dims) for r in op_maps)
    if covering and not src.regions:
        if exact is src.exact and whole is src.whole and covered is src.covered:
            return src
        return Wide(whole, (), exact, unknown, src.maps, covered)
    groups = []
    if whole and not covering:
        start = (full_read(value_dims, ()),)
        groups.append((distinct([_compose(start[0], r, instr, value_dims, budget) for r in op_maps]), whole))
        whole = frozenset()
    if src.regions:
        composed = _through_dict(
            dict(enumerate(regions for regions, _ in src.regions)), op_maps, instr, value_dims, budget
        )
        groups.extend((composed[k], keys) for k, (_, keys) in enumerate(src.regions))
    whole, regions, unknown, maps = _settle(groups, whole, unknown, src.maps, own_dims)
    return Wide(whole, regions, exact, unknown, maps, covered)


def _absorbed(
    exact: dict[_Endpoint, Maps], keys: frozenset[_Endpoint], value_dims: Dims, budget: PassBudget
) -> tuple[frozenset[_Endpoint], frozenset[_Endpoint]]:
    """Of the ``keys`` (the other side's unknown part) that ``exact`` reads too: those it reads
    whole (an unknown map joined with a full read is that full read, ``full_read.absorbed``, so
    they join ``whole``), and those the value's elements read all of together (still unknown,
    but ``covered``: a full reduction of the value reads them whole)."""
    if not exact or not keys:
        return frozenset(), frozenset()
    whole: set[_Endpoint] = set()
    covered: set[_Endpoint] = set()
    small, big = (keys, exact) if len(keys) < len(exact) else (exact, keys)
    for key in small:
        if key in big:
            maps, dims = exact[key], budget.endpoint_dims(key)
            if reads_whole(maps, value_dims, dims):
                whole.add(key)
            elif any(reads_all(m, value_dims, dims) for m in maps):
                covered.add(key)
    return frozenset(whole), frozenset(covered)


def _join(wide: Wide[_Endpoint], other: Summary[_Endpoint], value_dims: Dims, budget: PassBudget) -> Wide[_Endpoint]:
    """``wide ∪ other``: a full read absorbs whatever else reads that endpoint (every map lands in
    its box, an unknown one too); an unknown map absorbs other known ones (never "not read"),
    those that read all of the endpoint together making it ``covered``; regions of one endpoint join
    (into the whole box, a full read); a region read joined with exact maps is made maps."""
    if type(other) is Wide:
        o_whole, o_regions, o_exact, o_unknown, o_maps = (
            other.whole,
            other.regions,
            other.exact,
            other.unknown,
            other.maps,
        )
        o_covered = other.covered
    else:
        whole_keys, o_exact = _split(other, value_dims, budget)
        o_whole, o_regions, o_unknown, o_maps = frozenset(whole_keys), (), frozenset(), ()
        o_covered = frozenset()
    whole = wide.whole if o_whole <= wide.whole else wide.whole | o_whole
    whole_mine, covered_mine = _absorbed(wide.exact, o_unknown, value_dims, budget)
    whole_theirs, covered_theirs = _absorbed(o_exact, wide.unknown, value_dims, budget)
    if whole_mine or whole_theirs:
        whole = whole | whole_mine | whole_theirs
    o_covered = o_covered | covered_mine | covered_theirs if covered_mine or covered_theirs else o_covered
    o_unknown = o_unknown - whole if o_unknown and whole else o_unknown
    unknown = wide.unknown if o_unknown <= wide.unknown else wide.unknown | o_unknown
    if unknown and whole is not wide.whole:
        unknown = unknown - whole
    covered = wide.covered if o_covered <= wide.covered else wide.covered | o_covered
    if covered and (whole is not wide.whole or covered is not wide.covered):
        covered = covered & unknown  # a covered key now read whole is whole
    if not o_exact and not o_regions and whole is wide.whole and unknown is wide.unknown and covered is wide.covered:
        return wide
    maps = wide.maps or o_maps
    # every endpoint read on a region, with its regions from both sides
    region_of: dict[_Endpoint, Maps] = {}
    joined: dict[tuple[int, int], Maps] = {}  # one union per pair of region sets, not per endpoint
    for side in (wide.regions, o_regions):
        for regions, keys in side:
            for key in keys:
                if key in whole or key in unknown:
                    continue
                prev = region_of.get(key)
                if prev is None:
                    region_of[key] = regions
                    continue
                pair = (id(prev), id(regions))
                both = joined.get(pair)
                if both is None:
                    both = joined[pair] = finalize(union(prev, regions))
                region_of[key] = both
    # ``wide``'s exact maps, less the endpoints now read whole or unknown (its keys are distinct, so
    # nothing is joined yet): a copy, then removals from the smaller side, order kept (a whole
    # ENTRY's accumulated side holds hundreds of parameters; the joined side, a few)
    exact: dict[_Endpoint, Maps] = dict(wide.exact)
    for gone in (whole, unknown):
        if gone and exact:
            if len(gone) < len(exact):
                for key in gone:
                    exact.pop(key, None)
            else:
                exact = {key: key_maps for key, key_maps in exact.items() if key not in gone}
    grown: list[_Endpoint] = []
    for key, key_maps in o_exact.items():
        if key in whole or key in unknown:
            continue
        prev = exact.get(key)
        if prev is None:
            exact[key] = key_maps
        else:
            exact[key] = union(prev, key_maps)
            grown.append(key)
    for key in [k for k in exact if k in region_of]:  # read on a region and through maps: all maps
        dims = budget.endpoint_dims(key)
        exact[key] = union(exact[key], distinct(region_read(r, dims) for r in region_of.pop(key)))
        grown.append(key)
    became_whole = {k for k in grown if reads_whole(exact[k], value_dims, budget.endpoint_dims(k))}
    if became_whole:
        whole = whole | became_whole
        exact = {k: m for k, m in exact.items() if k not in became_whole}
    grouped: dict[int, tuple[Maps, set[_Endpoint]]] = {}
    for key, regions in region_of.items():
        hit = grouped.get(id(regions))
        if hit is None:
            grouped[id(regions)] = (regions, {key})
        else:
            hit[1].add(key)
    groups = [(regions, frozenset(keys)) for regions, keys in grouped.values()]
    whole, regions_out, unknown, maps = _settle(groups, whole, unknown, maps, value_dims)
    return Wide(whole, regions_out, exact, unknown, maps, covered & unknown if covered else covered)


def merge_summaries(
    acc: Summary[_Endpoint] | None, shared: bool, contrib: Summary[_Endpoint], value_dims: Dims, budget: PassBudget
) -> tuple[Summary[_Endpoint], bool]:
    """``acc ∪ contrib`` for a value of shape ``value_dims``; ``shared`` says ``acc`` is another
    value's dict (copy before writing)."""
    if acc is None:
        return contrib, True
    if contrib is acc or not contrib:
        return acc, shared
    if type(acc) is Wide:
        return _join(acc, contrib, value_dims, budget), True
    if type(contrib) is Wide:
        return _join(contrib, acc, value_dims, budget), True
    if shared:
        acc = dict(acc)
    threshold = compaction_threshold()
    for key, maps in contrib.items():
        prev = acc.get(key)
        if prev is None:
            acc[key] = maps
            continue
        joined = union(prev, maps)
        if joined is not prev and (budget.whole_absorbs or len(joined) > threshold or is_overflow(joined[0])):
            # a set with a full read in it is that full read: every other map reads inside the
            # endpoint, which the full read reads whole (MoE routing brings dozens of
            # runtime-indexed maps to a weight the dense path already reads whole, and each would
            # be composed at every op)
            # (kept in its normal form, ``full_read``, whatever form the one found has)
            dims = budget.endpoint_dims(key)
            if reads_whole(prev, value_dims, dims) or reads_whole(maps, value_dims, dims):
                joined = (full_read(value_dims, dims),)
        acc[key] = joined
    return acc, False
