"""Maps of a while loop over all its iterations, per tuple element of the loop state.

The body's maps ``B[j][m]`` (body output element j -> body parameter element m) are composed with
themselves: ``T_0`` is the identity per element, ``T_{n+1}[j][k] = U_m T_n[m][k] o B[j][m]`` (the
state after n+1 iterations, element j, read through the state after n). When ``T_{n+1} == T_n``
the relation is stable and ``T_N = T_n`` for every larger N; more generally when ``T_{n+1}``
equals an earlier ``T_i`` the sequence is periodic from i on, and ``T_N`` is read off the period.
With a known trip count N the loop's maps are ``T_N``; with an unknown one, the union over every n
(which also stops growing). The condition's reads at every evaluation (``C o T_n``, n = 0..N) are
added to every element: the number of iterations, hence every element's value, depends on them.

With jax's counter pattern and at most ``Budgets.loop_steps`` iterations the loop is unrolled instead:
iteration n's body has the counters folded in (``counter``), so an offset computed from them
is exact, ``T_{n+1} = T_n o B_n``, and rows read in progression are joined into one map over the
iteration (``joins``). Element pairs the unrolling gives up on take the general maps. There,
a dynamic offset inside the body stays a runtime variable, a fresh one per iteration composed
(its maps are the union over its values, as everywhere else). Each composition eliminates the
range variables that only witness a row between two others (``bound_witnesses``: a causal read of
a causal read is one causal read), so prefix reads stabilise after one step. Bounded
(``context.Budgets``): at most ``loop_steps`` compositions and ``loop_maps_per_pair`` maps per
element pair, else UNDEFINED naming the budget, per element pair: past ``loop_steps`` a pair that
stopped changing and reads only such pairs stays exact (``T_{n+1}[j][k]`` depends on the
``T_n[m][k]`` the body reads alone), the others are UNDEFINED, and so is every element's read of a
source the condition reads through a pair still changing.

An op of the body whose maps are unknown (an unknown custom-call) makes unknown only the pairs it
reaches: each such pair keeps its known maps (at most ``loop_known_maps_beside_unknown``: what it
certainly reads) beside one UNDEFINED map naming the body's op, which composes into UNDEFINED and
is never dropped; the other pairs stay exact. A full read among a pair's known maps, or one that the
loop's users make of them, settles the read exactly where the sets are finished.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ...affine import IndexingMap, Interval, dim, runtime_var
from ...affine.expr import DIM
from ...context import budget_reason, current, register_table, remember
from ...hlo.model import Computation, Instruction, Shape
from ...hlo.shapes import compatible
from ...ops.shape_maps import full_interval
from ..bound_witnesses import eliminate_bound_witnesses
from ..compose import computation_output_to_input
from ..existential import drop_witness_range_vars
from ..rule_cache import is_identity_on
from ..walk import compose_step
from .counter import counters, specialised_body
from .joins import join_progressions
from .trip_count import induction_variable, known_trip_count

Row = dict[int, tuple[IndexingMap, ...]]  # element k -> maps
Matrix = dict[int, Row]  # element j -> element k -> maps
Dims = list[tuple[int, ...]]  # per loop state element, its dims


def _key(maps: tuple[IndexingMap, ...]) -> frozenset[tuple[object, ...]]:
    return frozenset(m.canonical_key() for m in maps)


def _merge(
    into: dict[int, list[IndexingMap]],
    k: int,
    new: Iterable[IndexingMap],
    seen: dict[int, set[tuple[object, ...]]] | None = None,
    limit: int | None = None,
) -> None:
    """``new``'s maps not yet in ``into[k]`` appended to it. ``seen``: the canonical keys of each
    ``into[k]``, kept beside it by a caller that merges into one row many times (a row's keys are
    otherwise gathered again at each merge). ``limit``: ``into[k]`` is over its budget once it
    holds more than ``limit`` maps, whatever else comes: ``new`` is not read further."""
    got = into.setdefault(k, [])
    keys = {m.canonical_key() for m in got} if seen is None else seen.setdefault(k, set())
    for m in new:
        if m.canonical_key() not in keys:
            keys.add(m.canonical_key())
            got.append(m)
            if limit is not None and len(got) > limit:
                return


def _overwrite_note(body_maps: Matrix) -> str:
    """Why the maps multiply, when a body map holds only where runtime offsets leave an element in
    place (a dynamic-update-slice's or overwriting scatter's operand): fresh offsets each iteration."""
    for row in body_maps.values():
        for maps in row.values():
            for m in maps:
                if m.runtime_vars and not any(
                    runtime_var(k) in r.variables() for r in m.results for k in range(len(m.runtime_vars))
                ):
                    return (
                        "; the body keeps elements only where runtime offsets do not overwrite them, with "
                        "fresh offsets each iteration: which elements survive every iteration is not "
                        "expressible as maps"
                    )
    return ""


class LoopTooComplex(Exception):
    pass


# (id(outer map), id(inner map), value dims) -> (outer map, inner map, composed map or None for
# KNOWN EMPTY) per analysis context: an identity memo, since the iterations compose the same map
# objects again and again
_PAIRS = register_table("fusion.loops.composed_pairs")
# (outer map's written key, inner map's, value dims, id(while)) -> (while, composed map or None)
# per analysis context: each iteration's maps are new objects equal to the last ones', which the
# identity memo above cannot see (the llama 3.1 fp8 benchmarks: 15,092 compositions, 2,267 distinct)
_WRITTEN_PAIRS = register_table("fusion.loops.composed_written_pairs")


def _compose(
    outer: tuple[IndexingMap, ...], inner: tuple[IndexingMap, ...], instr: Instruction, value_dims: tuple[int, ...]
) -> Iterator[IndexingMap]:
    """Each ``m_out o m_in`` in turn (made as it is asked for: a pair over its budget asks no more)."""
    pairs: dict[tuple[int, int, tuple[int, ...]], tuple[IndexingMap, IndexingMap, IndexingMap | None]]
    ctx = current()
    pairs = ctx.tables[_PAIRS]
    written: dict[tuple[object, ...], tuple[Instruction, IndexingMap | None]] = ctx.tables[_WRITTEN_PAIRS]
    for m_in in inner:
        box = _box_of_identity(m_in, value_dims)
        for m_out in outer:
            if m_in.is_undefined or m_out.is_undefined:  # a pair given up on stays given up on
                yield m_in if m_in.is_undefined else m_out
                continue
            key = (id(m_out), id(m_in), value_dims)
            hit = pairs.get(key)
            if hit is None or hit[0] is not m_out or hit[1] is not m_in:
                # ``box`` follows from the inner map and the dims: the written key holds it
                shared_key = (m_out.written_key(), m_in.written_key(), value_dims, id(instr))
                shared = written.get(shared_key)
                if shared is None or shared[0] is not instr:
                    composed = _pair(m_out, m_in, box, instr, value_dims)
                    remember(written, shared_key, (instr, composed), ctx.budgets.loop_composition_memo)
                else:
                    composed = shared[1]
                hit = pairs[key] = (m_out, m_in, composed)
            if hit[2] is not None:
                yield hit[2]


def _pair(
    m_out: IndexingMap,
    m_in: IndexingMap,
    box: tuple[Interval, ...] | None,
    instr: Instruction,
    value_dims: tuple[int, ...],
) -> IndexingMap | None:
    """``m_out o m_in`` without unused variables, or None when KNOWN EMPTY; raises
    ``LoopTooComplex`` when the composition gives up (nothing is remembered then)."""
    if box is not None and not m_out.is_known_empty and not is_identity_on(m_out, value_dims):
        inside = _inside(m_out.dims, box)
        if inside is False:  # no point of the box is in m_out's domain
            return None
        if inside:  # m_out's domain lies in the box, where m_in keeps every index
            c = drop_witness_range_vars(m_out.simplified().remove_unused_variables())
            return None if c.is_known_empty else c.remove_unused_variables()
    c = compose_step(m_out, m_in, instr, value_dims)
    if c.is_undefined:
        raise LoopTooComplex(c.undefined_reason)
    c = eliminate_bound_witnesses(c, every=True)  # a prefix of a prefix is a prefix: no witness chain
    return None if c.is_known_empty else c.remove_unused_variables()


def _box_of_identity(m: IndexingMap, value_dims: tuple[int, ...]) -> tuple[Interval, ...] | None:
    """The box on which ``m`` is ``(d0, ..., dn) -> (d0, ..., dn)`` and nothing else (a loop state
    element kept in place but for the part one iteration overwrites), or None. The box is the
    domain's, narrowed by constraints on one dimension each (``d0 in [1, 7]``: a stacked layer's
    rows but the one this iteration writes)."""
    if m.is_undefined or m.is_known_empty or m.range_vars or m.runtime_vars:
        return None
    if not m.constraints and is_identity_on(m, value_dims):  # the whole box: ``compose_step``'s own case
        return None
    if len(m.results) != len(value_dims) or m.num_dims != len(value_dims):
        return None
    if any(r != dim(i) for i, r in enumerate(m.results)):
        return None
    box = list(m.dims)
    for e, bounds in m.constraints:
        if e.kind != DIM:
            return None
        box[e.value] = box[e.value].intersect(bounds)
    return tuple(box)


def _inside(dims: tuple[Interval, ...], box: tuple[Interval, ...]) -> bool | None:
    """True: ``dims`` lie in ``box``; False: they miss it; None: they overlap it in part."""
    if len(dims) != len(box):
        return None
    if any(d.hi < b.lo or d.lo > b.hi for d, b in zip(dims, box)):
        return False
    if all(b.lo <= d.lo and d.hi <= b.hi for d, b in zip(dims, box)):
        return True
    return None


def _step(t: Matrix, body_maps: Matrix, instr: Instruction, dims: Dims, pieces: int = 1) -> Matrix:
    """``T o B``; a pair with more than ``pieces`` times ``Budgets.loop_maps_per_pair`` maps is
    UNDEFINED (``pieces``: how many an unrolled loop's iterations may add before they are joined)."""
    nxt: Matrix = {}
    limit = current().budgets.loop_maps_per_pair * pieces
    beside_unknown = current().budgets.loop_known_maps_beside_unknown
    for j, reads in body_maps.items():
        row: dict[int, list[IndexingMap]] = {}
        seen: dict[int, set[tuple[object, ...]]] = {}
        for m, b in reads.items():
            for k, tm in t.get(m, {}).items():
                if len(row.get(k, ())) <= limit:  # over it, the pair is UNDEFINED below whatever comes
                    _merge(row, k, _compose(tm, b, instr, dims[m]), seen, limit)
        for k, maps in row.items():
            if len(maps) > limit:
                # this pair only: the elements that do not read it through the loop keep their maps
                row[k] = [
                    IndexingMap.undefined(
                        "while: "
                        + budget_reason("loop_maps_per_pair", limit, "distinct maps between two loop state elements")
                        + _overwrite_note(body_maps)
                    )
                ]
            elif any(m.is_undefined for m in maps):
                # given up on (a budget): no use composing its known maps further; read through an
                # op of the body whose maps are unknown: the known maps stay, within their budget
                row[k] = list(_beside_unknown(maps, 0 if _given_up(maps) else beside_unknown * pieces))
        nxt[j] = {k: tuple(v) for k, v in sorted(row.items()) if v}
    return nxt


def _same(a: Matrix, b: Matrix) -> bool:
    if a.keys() != b.keys():
        return False
    return all(a[j].keys() == b[j].keys() and all(_key(a[j][k]) == _key(b[j][k]) for k in a[j]) for j in a)


def _union(a: Matrix, b: Matrix) -> Matrix:
    out: Matrix = {}
    for j in sorted(set(a) | set(b)):
        row: dict[int, list[IndexingMap]] = {}
        for src in (a.get(j, {}), b.get(j, {})):
            for k, maps in src.items():
                _merge(row, k, list(maps))
        out[j] = {k: tuple(v) for k, v in sorted(row.items())}
    return out


# id(while) -> (while, matrix or reason) per analysis context: an identity memo, since the rule is
# asked once per output element of the loop state and the matrix serves them all
_MATRICES = register_table("fusion.loops.matrices")


def loop_matrix(instr: Instruction) -> Matrix | str:
    """Per while output element j: init element k -> maps; or the reason none can be given."""
    memo: dict[int, tuple[Instruction, Matrix | str]] = current().tables[_MATRICES]
    hit = memo.get(id(instr))
    if hit is None or hit[0] is not instr:
        hit = memo[id(instr)] = (instr, _loop_matrix(instr))
    return hit[1]


def _body_matrix(body: Computation, count: int) -> Matrix:
    """``B[j][m]``: per body output element j, the body parameter's elements m it reads and how.
    A pair read through an op whose maps are unknown keeps its known maps beside one UNDEFINED map
    (``_with_body_unknown``): the other pairs stay exact, and so does what the loop reads through the
    known maps (a full read among them makes the pair exact again, wherever it is joined)."""
    body_maps: Matrix = {}
    for j in range(count):
        per_param = computation_output_to_input(body, j)
        body_maps[j] = {e: _with_body_unknown(maps) for (p, e), maps in per_param.items() if p == 0 and maps}
    return body_maps


# per analysis context: its reason -> the UNDEFINED map naming a loop body's op of unknown maps
_BODY_UNKNOWN = register_table("fusion.loops.body_unknown")


def _with_body_unknown(maps: tuple[IndexingMap, ...]) -> tuple[IndexingMap, ...]:
    """``maps`` with their UNDEFINED ones replaced by one naming the loop body (the first's reason):
    one object per reason in this context, since the compositions' memos key on identity."""
    unknown = next((m for m in maps if m.is_undefined), None)
    if unknown is None:
        return maps
    table: dict[str, IndexingMap] = current().tables[_BODY_UNKNOWN]
    reason = f"while body: {unknown.undefined_reason}"
    body = table.get(reason)
    if body is None:
        body = table[reason] = IndexingMap.undefined(reason)
    return (*(m for m in maps if not m.is_undefined), body)


def _given_up(maps: Sequence[IndexingMap]) -> bool:
    """Whether an UNDEFINED map among ``maps`` says the composition gave up (a budget), rather
    than that the body reads through an op whose maps are unknown (which every way of composing
    the loop says alike)."""
    table: dict[str, IndexingMap] = current().tables[_BODY_UNKNOWN]
    return any(m.is_undefined and table.get(m.undefined_reason) is not m for m in maps)


def _beside_unknown(maps: Sequence[IndexingMap], limit: int) -> tuple[IndexingMap, ...]:
    """``maps``, which hold an UNDEFINED map: their known maps and the first UNDEFINED one, the UNDEFINED
    map last, or that UNDEFINED map alone past ``limit`` known maps."""
    unknown = next(m for m in maps if m.is_undefined)
    known = tuple(m for m in maps if not m.is_undefined)
    return (*known, unknown) if len(known) <= limit else (unknown,)


def _loop_matrix(instr: Instruction) -> Matrix | str:
    body, cond = instr.called.get("body"), instr.called.get("condition")
    if body is None or cond is None or body.root is None or cond.root is None:
        return "while: body or condition computation not resolved"
    shape = instr.shape
    if not shape.is_tuple or any(shape.leaf(e).is_tuple for e in range(shape.num_outputs)):
        return "while: the loop state is not a flat tuple of arrays"
    misfit = _misfit(shape, body, cond)
    if misfit:
        return f"while: {misfit}, which XLA's verifier rejects (ShapeInference::InferWhileShape)"
    count = shape.num_outputs
    dims = [shape.leaf(e).dims for e in range(count)]
    cond_maps = {e: maps for (p, e), maps in computation_output_to_input(cond, 0).items() if p == 0 and maps}
    if any(m.is_undefined for maps in cond_maps.values() for m in maps):
        return "while condition: " + next(
            m.undefined_reason for maps in cond_maps.values() for m in maps if m.is_undefined
        )
    trips = known_trip_count(instr)
    unrolled = _unrolled(instr, body, cond_maps, dims, trips)
    if isinstance(unrolled, dict) and not any(_given_up(maps) for row in unrolled.values() for maps in row.values()):
        return unrolled
    general = _general(instr, body, cond_maps, dims, trips)
    if not isinstance(unrolled, dict):
        return general
    # pairs the unrolled composition gave up on take the general (runtime-variable) maps
    result: Matrix = {}
    for j, row in unrolled.items():
        out = {}
        for k, maps in row.items():
            if _given_up(maps) and isinstance(general, dict):
                maps = general.get(j, {}).get(k, ())
            if maps:
                out[k] = maps
        result[j] = out
    return result


def _misfit(state: Shape, body: Computation, cond: Computation) -> str | None:
    """What does not fit the loop state: the body and the condition take it as their one
    parameter, and the body gives it back."""
    for role, comp in (("body", body), ("condition", cond)):
        if len(comp.parameters) != 1:
            return f"the {role} takes {len(comp.parameters)} parameters, not 1"
        if not compatible(comp.parameters[0].shape, state):
            return f"the {role}'s parameter is {comp.parameters[0].shape}, the loop state {state}"
    if body.root is not None and not compatible(body.root.shape, state):
        return f"the body gives {body.root.shape}, the loop state is {state}"
    return None


def _general(instr: Instruction, body: Computation, cond_maps: Row, dims: Dims, trips: int | None) -> Matrix | str:
    """One body map for every iteration: dynamic offsets stay runtime variables."""
    count = len(dims)
    body_maps = _body_matrix(body, count)
    identity: Matrix = {j: {j: (IndexingMap.identity(dims[j]),)} for j in range(count)}
    try:
        states = _iterate(identity, body_maps, instr, dims, trips)
    except LoopTooComplex as exc:
        return f"while: {exc}" + _overwrite_note(body_maps)
    if isinstance(states, str):
        return states + _overwrite_note(body_maps)
    final, visited, moving = states
    result = _with_control(final, visited, cond_maps, instr, dims)
    if isinstance(result, str) or not moving:
        return result
    # The condition reads the state at every iteration: through a pair still moving, its reads
    # after the last step are not known, and so no element's read of that source is.
    # A pair still moving is UNDEFINED whether or not it reads anything yet: it may later.
    unknown_sources = {k for m, k in moving if m in cond_maps}
    undefined = (IndexingMap.undefined(_not_stable(trips)),)
    out: Matrix = {}
    for j, row in result.items():
        keys = set(row) | {k for jj, k in moving if jj == j}
        out[j] = {k: (undefined if k in unknown_sources or (j, k) in moving else row[k]) for k in sorted(keys)}
    return out


def _unrolled(
    instr: Instruction, body: Computation, cond_maps: Row, dims: Dims, trips: int | None
) -> Matrix | str | None:
    """Iteration by iteration, each with the counters folded into the body (``counter``):
    ``T_{n+1} = T_n o B_n`` exactly. None where it does not apply (no counter pattern, its count
    not the loop's, more than ``Budgets.loop_steps`` iterations, or no op reads the counter as an offset)."""
    found = induction_variable(instr)
    if found is None or trips is None or found[3] != trips or trips > current().budgets.loop_steps or trips == 0:
        return None
    count = len(dims)
    general = _body_matrix(body, count)
    # Folding a counter drops the reads of it by the ops that now see a constant. The compared
    # counter's are covered: the condition reads it, and every element takes the condition's
    # reads. Another counter (jax's fori index) is folded only where the unfolded body reads it
    # from whole elements (no constraint, no runtime variable): those reads are added back as such.
    known, readers = {}, {}
    for e, (start, step) in counters(instr).items():
        reads = {j: row[e] for j, row in general.items() if e in row}
        if e == found[0] or all(_whole_read(m, dims[j]) for j, maps in reads.items() for m in maps):
            known[e] = (start, step)
            if e != found[0]:
                readers[e] = reads
    bodies = [specialised_body(body, {e: start + n * step for e, (start, step) in known.items()}) for n in range(trips)]
    if all(b is None for b in bodies):
        return None
    t: Matrix = {j: {j: (IndexingMap.identity(dims[j]),)} for j in range(count)}
    visited = [t]
    try:
        for n, specialised in enumerate(bodies, 1):
            body_maps = _body_matrix(specialised or body, count)
            for e, reads in readers.items():
                for j, maps in reads.items():
                    row = {k: list(v) for k, v in body_maps.setdefault(j, {}).items()}
                    _merge(row, e, list(maps))
                    body_maps[j] = {k: tuple(v) for k, v in sorted(row.items())}
            # Room for n x n batches of pieces after n iterations, joined at the end: a prefix read
            # (row t reads rows 0..t) adds n at iteration n. Pieces that multiply instead (runtime
            # offsets overwriting afresh each iteration: a scatter expanded into a loop) reach the
            # budget within a few iterations, not after all of them (one took 18 s for 16 trips).
            t = _step(t, body_maps, instr, dims, n * n)
            visited.append(t)
    except LoopTooComplex as exc:
        return f"while: {exc}"
    result = _with_control(t, visited, cond_maps, instr, dims)
    if isinstance(result, str):
        return result
    return {j: {k: _joined(maps) for k, maps in row.items()} for j, row in result.items()}


def _joined(maps: tuple[IndexingMap, ...]) -> tuple[IndexingMap, ...]:
    """An unrolled pair's pieces joined; UNDEFINED when still more than the budget allows (for
    the known maps beside an UNDEFINED one, ``loop_known_maps_beside_unknown``)."""
    joined = join_progressions(maps)
    if any(m.is_undefined for m in joined):
        return _beside_unknown(joined, current().budgets.loop_known_maps_beside_unknown)
    limit = current().budgets.loop_maps_per_pair
    if len(joined) <= limit:
        return joined
    reason = budget_reason("loop_maps_per_pair", limit, "distinct maps between two loop state elements")
    return (IndexingMap.undefined(f"while: {reason}, joined over the iterations"),)


def _whole_read(m: IndexingMap, dims: tuple[int, ...]) -> bool:
    """Every element of ``dims`` reads the whole (scalar) target, unconditionally."""
    return (
        not m.is_undefined
        and not m.is_known_empty
        and not m.runtime_vars
        and not m.constraints
        and tuple(m.dims) == tuple(full_interval(n) for n in dims)
    )


def _with_control(final: Matrix, visited: list[Matrix], cond_maps: Row, instr: Instruction, dims: Dims) -> Matrix | str:
    """The condition, evaluated on every state visited, decides how many iterations run."""
    control: dict[int, list[IndexingMap]] = {}
    cond_row = {0: cond_maps}
    try:
        for t in visited:
            for k, maps in _step(t, cond_row, instr, dims).get(0, {}).items():
                _merge(control, k, list(maps))
    except LoopTooComplex as exc:
        return f"while: {exc}"
    result: Matrix = {}
    for j in range(len(dims)):
        row: dict[int, list[IndexingMap]] = {k: list(v) for k, v in final.get(j, {}).items()}
        for k, read_by_control in control.items():
            _merge(row, k, [_lift(m, dims[j]) for m in read_by_control])
        result[j] = {k: tuple(v) for k, v in sorted(row.items())}
    return result


def _lift(m: IndexingMap, dims: tuple[int, ...]) -> IndexingMap:
    """A map from the condition's scalar to an element, seen from every element of ``dims``
    (the scalar's map composed after the zero-result map ``dims -> ()``)."""
    if m.num_dims != 0 or m.is_undefined or m.is_known_empty:
        return m
    return IndexingMap([full_interval(n) for n in dims], m.range_vars, m.runtime_vars, m.results, m.constraints)


def _iterate(
    start: Matrix, body_maps: Matrix, instr: Instruction, dims: Dims, trips: int | None
) -> tuple[Matrix, list[Matrix], set[tuple[int, int]]] | str:
    """(T_N or the union over all n, every distinct T_n visited, the element pairs that did not
    stabilise within the budget: the caller makes them UNDEFINED, the rest are exact)."""
    t, visited = start, [start]
    union = start
    before: Matrix | None = None  # the matrix one step before the last, once a step is taken
    steps = current().budgets.loop_steps
    for n in range(steps):
        if trips is not None and n == trips:
            return t, visited, set()
        nxt = _step(t, body_maps, instr, dims)
        if trips is not None:
            # T_{n+1} equal to an earlier T_i: the sequence repeats with period n + 1 - i
            for i, earlier in enumerate(visited):
                if _same(nxt, earlier):
                    period = n + 1 - i
                    return visited[i + (trips - i) % period], visited, set()
        if trips is None:
            grown = _union(union, nxt)
            if _same(grown, union):
                return union, visited, set()
            before, union = union, grown
        else:
            before = t
        t = nxt
        visited.append(t)
    # Past the budget, the pairs that stopped changing, and read only pairs that did, are stable
    # for good and exact; the others are UNDEFINED, each pair on its own.
    last = union if trips is None else t
    if before is None:  # no step taken (a budget of none): nothing is known to be stable
        return _not_stable(trips)
    moving = _moving_pairs(before, last, body_maps, len(dims))
    if all((j, k) in moving for j, row in last.items() for k in row):
        return _not_stable(trips)
    return last, visited, moving


def _not_stable(trips: int | None) -> str:
    what = f"{trips} iterations" if trips is not None else "an unknown number of iterations"
    steps = current().budgets.loop_steps
    return "while: the loop-carried maps do not stabilise: " + budget_reason(
        "loop_steps", steps, f"compositions ({what})"
    )


def _moving_pairs(before: Matrix, after: Matrix, body_maps: Matrix, count: int) -> set[tuple[int, int]]:
    """The element pairs (j, k) whose maps may still change after ``after``: those that differ
    from ``before``, and every pair that reads one of them through the body (``T_{n+1}[j][k]``
    is the union over m of ``T_n[m][k] o B[j][m]``, so a pair whose every source is unchanged
    stays unchanged at every later step)."""
    sources = sorted({k for row in (*before.values(), *after.values()) for k in row})
    moving = {
        (j, k)
        for j in range(count)
        for k in sources
        if _key(before.get(j, {}).get(k, ())) != _key(after.get(j, {}).get(k, ()))
    }
    readers: dict[int, list[int]] = {}  # m -> the elements j whose body maps read m
    for j, row in body_maps.items():
        for m, maps in row.items():
            if maps:
                readers.setdefault(m, []).append(j)
    todo = list(moving)
    while todo:
        m, k = todo.pop()
        for j in readers.get(m, ()):
            if (j, k) not in moving:
                moving.add((j, k))
                todo.append((j, k))
    return moving
