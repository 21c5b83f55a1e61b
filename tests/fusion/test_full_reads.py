"""Full reads: a value that reads every element of a parameter from every element of its own.

Small training-step-like ENTRY computations (a dot, a full reduction of the loss, a broadcast back,
a multiply with the weight) analysed with a tiny ``endpoints_per_value`` so that their values go
through the whole-computation passes' full-read path. Expectations come from an independent
dependency interpreter (numpy arrays of sets of the parameter elements each element depends on,
op by op from the ops' definitions), never from the tool: every map's read set must be exactly
the set the interpreter finds, in both directions; and maps that are full reads print as the
full read of the definition, a fixpoint of the tool's simplifier.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hlo_index.affine import IndexingMap, parse_map
from hlo_index.affine.evaluate import read_set
from hlo_index.affine.expr import dim, mod, range_var
from hlo_index.api import SelectedTarget
from hlo_index.context import AnalysisContext
from hlo_index.fusion import input_to_output, output_to_input
from hlo_index.fusion.full_read import covers, full_read, is_full_read, region_read
from hlo_index.fusion.summaries import bottom_up_output_to_input
from hlo_index.fusion.walk import walk_of
from hlo_index.hlo import parse_module_text
from hlo_index.verify import verify_target

ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""

# loss = sum(x . w); the weight update w * broadcast(loss); a concatenate of two values that read
# x whole; a slice of one; a value read both whole (through the loss) and element by element.
TRAINING_STEP = (
    "HloModule step\n"
    + ADD
    + """ENTRY e {
  x = f32[4,6] parameter(0)
  w = f32[6,3] parameter(1)
  b = f32[3] parameter(2)
  h = f32[4,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,3] broadcast(b), dimensions={1}
  hb = f32[4,3] add(h, bb)
  zero = f32[] constant(0)
  loss = f32[] reduce(hb, zero), dimensions={0,1}, to_apply=add
  g = f32[6,3] broadcast(loss), dimensions={}
  upd = f32[6,3] multiply(w, g)
  gx = f32[2,6] broadcast(loss), dimensions={}
  xs = f32[2,6] slice(x), slice={[1:3], [0:6]}
  cat = f32[4,6] concatenate(gx, xs), dimensions={0}
  both = f32[6,3] add(upd, w)
  part = f32[1,6] slice(cat), slice={[0:1], [0:6]}
  ROOT out = (f32[6,3], f32[4,6], f32[6,3], f32[1,6], f32[]) tuple(upd, cat, both, part, loss)
}
"""
)


def _deps(instructions, known: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Instruction name -> object array (its shape) of frozensets of (parameter, index) it reads
    (``known``: those of earlier instructions, not in ``instructions``, that these read)."""
    out: dict[str, np.ndarray] = dict(known or {})

    def empty(shape):
        a = np.empty(shape, dtype=object)
        for idx in itertools.product(*(range(n) for n in shape)):
            a[idx] = frozenset()
        return a

    for instr in instructions:
        op = instr.opcode
        shape = tuple(instr.shape.dims) if not instr.shape.is_tuple else None
        ops = [out.get(o.name) for o in instr.operands]
        if op == "parameter":
            a = empty(shape)
            for idx in itertools.product(*(range(n) for n in shape)):
                a[idx] = frozenset({(instr.parameter_number, idx)})
        elif op == "constant":
            a = empty(shape)
        elif op in ("add", "multiply"):
            a = empty(shape)
            for idx in itertools.product(*(range(n) for n in shape)):
                a[idx] = ops[0][idx] | ops[1][idx]
        elif op == "broadcast":
            kept = [int(d) for d in instr.attr("dimensions")]
            a = empty(shape)
            for idx in itertools.product(*(range(n) for n in shape)):
                a[idx] = ops[0][tuple(idx[d] for d in kept)]
        elif op == "reduce":
            every = frozenset().union(*ops[0].ravel()) | frozenset().union(*ops[1].ravel())
            a = empty(shape)
            assert shape == ()  # the full reductions of these modules
            a[()] = every
        elif op == "dot":  # [m,k] x [k,n]
            lhs, rhs = ops
            a = empty(shape)
            for i, j in itertools.product(range(shape[0]), range(shape[1])):
                a[i, j] = frozenset().union(*(lhs[i, k] | rhs[k, j] for k in range(lhs.shape[1])))
        elif op == "slice":
            starts = [s.start for s in instr.attr("slice")]
            a = empty(shape)
            for idx in itertools.product(*(range(n) for n in shape)):
                a[idx] = ops[0][tuple(i + s for i, s in zip(idx, starts))]
        elif op == "concatenate":
            a = np.concatenate(ops, axis=int(instr.attr("dimensions")[0]))
        elif op == "tuple":
            continue
        else:
            raise AssertionError(op)
        out[instr.name] = a
    return out


def _reads(maps, dims) -> set[tuple]:
    """(output index, operand index) pairs the maps read, point by point."""
    got = set()
    for idx in itertools.product(*(range(n) for n in dims)):
        for m in maps:
            assert not m.is_undefined, m.undefined_reason
            got |= {(idx, r) for r in read_set(m, idx)}
    return got


def _expected(deps: dict[str, np.ndarray], value: str, parameter: int) -> set[tuple]:
    a = deps[value]
    return {
        (idx, p_idx) for idx in itertools.product(*(range(n) for n in a.shape)) for p, p_idx in a[idx] if p == parameter
    }


@pytest.mark.parametrize("endpoints", [1, 2, 128])
def test_every_map_of_a_training_step_reads_what_the_interpreter_reads(endpoints):
    comp = parse_module_text(TRAINING_STEP).entry
    deps = _deps(comp.instructions)
    with AnalysisContext(endpoints_per_value=endpoints):
        rows = output_to_input(comp)
        backward = input_to_output(comp)
        outcome = verify_target(SelectedTarget("computation", comp))
    assert not outcome.errors, outcome.errors
    known = 0
    for row in rows:
        value = comp.root.operands[row.output]
        if _unknown(row.maps):
            continue
        known += 1
        assert _reads(row.maps, value.shape.dims) == _expected(deps, value.name, row.operand), (value.name, row.operand)
    for row in backward:
        value = comp.root.operands[row.output]
        param = comp.parameters[row.operand]
        if _unknown(row.maps):
            continue
        known += 1
        flipped = {(o, i) for i, o in _reads(row.maps, param.shape.dims)}
        assert flipped == _expected(deps, value.name, row.operand), (row.operand, value.name)
    assert known == len(rows) + len(backward) if endpoints > 3 else known > 0


def _unknown(maps) -> bool:
    """An UNDEFINED map may only come from a budget, and then it is the row's only map."""
    if not any(m.is_undefined for m in maps):
        return False
    assert len(maps) == 1 and maps[0].undefined_reason.startswith("budget "), [str(m) for m in maps]
    return True


def test_full_reads_through_the_loss_print_as_the_full_read():
    comp = parse_module_text(TRAINING_STEP).entry
    with AnalysisContext(endpoints_per_value=1):
        rows = {(r.output, r.operand): r.maps for r in output_to_input(comp)}
    # upd = w * broadcast(sum(x . w + b)): every element reads all of x, and all of w, and all of b
    x_whole = "(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 5], d1 in [0, 2], s0 in [0, 3], s1 in [0, 5]"
    b_whole = "(d0, d1)[s0] -> (s0), domain: d0 in [0, 5], d1 in [0, 2], s0 in [0, 2]"
    assert [str(m) for m in rows[(0, 0)]] == [x_whole]
    assert [str(m) for m in rows[(0, 2)]] == [b_whole]
    # both = upd + w reads w whole, and w element by element: the union is the full read
    assert [str(m) for m in rows[(2, 1)]] == [
        "(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 5], d1 in [0, 2], s0 in [0, 5], s1 in [0, 2]"
    ]
    for maps in rows.values():
        for m in maps:
            assert str(parse_map(str(m)).simplified()) == str(m)


def test_a_composed_full_read_stays_one():
    """sum -> broadcast -> sum -> broadcast -> transpose -> slice: still every element reads all."""
    text = (
        "HloModule chain\n"
        + ADD
        + """ENTRY e {
  p = f32[3,1,5] parameter(0)
  q = f32[2] parameter(1)
  zero = f32[] constant(0)
  r = f32[] reduce(p, zero), dimensions={0,1,2}, to_apply=add
  b = f32[4,7] broadcast(r), dimensions={}
  qr = f32[] reduce(q, zero), dimensions={0}, to_apply=add
  qb = f32[4,7] broadcast(qr), dimensions={}
  s = f32[4,7] add(b, qb)
  r2 = f32[7] reduce(s, zero), dimensions={0}, to_apply=add
  b2 = f32[7,6] broadcast(r2), dimensions={0}
  t = f32[6,7] transpose(b2), dimensions={1,0}
  ROOT sl = f32[3,7] slice(t), slice={[1:4], [0:7]}
}
"""
    )
    comp = parse_module_text(text).entry
    for endpoints in (1, 128):
        with AnalysisContext(endpoints_per_value=endpoints):
            rows = {r.operand: r.maps for r in output_to_input(comp)}
        assert [str(m) for m in rows[0]] == [
            "(d0, d1)[s0, s1] -> (s0, 0, s1), domain: d0 in [0, 2], d1 in [0, 6], s0 in [0, 2], s1 in [0, 4]"
        ]
        assert [str(m) for m in rows[1]] == ["(d0, d1)[s0] -> (s0), domain: d0 in [0, 2], d1 in [0, 6], s0 in [0, 1]"]


def test_the_full_read_is_its_definition_and_a_fixpoint():
    with AnalysisContext():
        m = full_read((2, 3), (4, 1, 5))
        assert (
            str(m) == "(d0, d1)[s0, s1] -> (s0, 0, s1), domain: d0 in [0, 1], d1 in [0, 2], s0 in [0, 3], s1 in [0, 4]"
        )
        assert str(m.simplified()) == str(m)
        for point in itertools.product(range(2), range(3)):
            assert read_set(m, point) == set(itertools.product(range(4), range(1), range(5)))
        region = IndexingMap([(0, 3), (0, 2)], [], [], [], [(dim(0), (1, 2))])
        r = region_read(region, (2, 3))
        assert str(r.simplified()) == str(r)
        for point in itertools.product(range(4), range(3)):
            expected = set(itertools.product(range(2), range(3))) if 1 <= point[0] <= 2 else set()
            assert read_set(r, point) == expected


@pytest.mark.parametrize(
    "results, range_vars, endpoint, expected",
    [
        ([range_var(0)], [(0, 7)], (8,), True),
        ([range_var(0)], [(0, 6)], (8,), False),  # misses the last element
        ([mod(range_var(0), 512)], [(0, 4095)], (512,), True),  # an all-gathered read of the whole
        ([mod(range_var(0), 512)], [(0, 255)], (512,), False),
        ([range_var(0) * 4 + range_var(1)], [(0, 1), (0, 3)], (8,), True),  # enumerated
        ([range_var(0) * 4 + range_var(1)], [(0, 1), (0, 2)], (8,), False),
        ([range_var(0), range_var(0)], [(0, 3)], (4, 4), False),  # a diagonal, not the box
        ([range_var(0), 0], [(0, 3)], (4, 1), True),
        ([range_var(0), 0], [(0, 3)], (4, 2), False),
        ([dim(0)], [], (3,), False),  # depends on the output element
    ],
)
def test_is_full_read_proves_only_what_holds(results, range_vars, endpoint, expected):
    m = IndexingMap([(0, 2)], range_vars, [], results)
    with AnalysisContext():
        assert is_full_read(m, (3,), endpoint) is expected
        if range_vars:  # brute force agrees
            every = set(itertools.product(*(range(n) for n in endpoint)))
            assert all(read_set(m, (d,)) == every for d in range(3)) is expected


def test_a_constrained_map_is_never_a_full_read():
    m = IndexingMap([(0, 2)], [(0, 3)], [], [range_var(0)], [(dim(0), (0, 1))])
    with AnalysisContext():
        assert not is_full_read(m, (3,), (4,))


# ``both`` reads w through the loss (whole) and through a custom-call whose access pattern is
# unknown; ``lone`` reads w only through that custom-call; ``mixed`` reads b element by element
# and through the custom-call, with no full read of b to absorb the unknown part.
UNKNOWN_BESIDE_WHOLE = (
    "HloModule step\n"
    + ADD
    + """ENTRY e {
  x = f32[4,6] parameter(0)
  w = f32[6,3] parameter(1)
  b = f32[3] parameter(2)
  h = f32[4,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  loss = f32[] reduce(h, zero), dimensions={0,1}, to_apply=add
  g = f32[6,3] broadcast(loss), dimensions={}
  cc = f32[6,3] custom-call(w, b), custom_call_target="external_kernel"
  both = f32[6,3] add(g, cc)
  lone = f32[6,3] multiply(cc, cc)
  bb = f32[6,3] broadcast(b), dimensions={1}
  mixed = f32[6,3] add(bb, cc)
  ROOT out = (f32[6,3], f32[6,3], f32[6,3]) tuple(both, lone, mixed)
}
"""
)


def _deps_with(comp, external: str) -> dict[str, np.ndarray]:
    """``_deps`` of ``comp`` with the custom-call given one possible semantics: ``"none"`` (it reads
    nothing of its operands) or ``"all"`` (each element reads every element of every operand)."""
    # the interpreter has no custom-call: it runs on the instructions before and after it, the
    # custom-call's own sets given here
    instructions = comp.instructions
    at = [i.name for i in instructions].index("cc")
    deps = _deps(instructions[:at])
    cc = instructions[at]
    every = frozenset().union(*(frozenset().union(*deps[o.name].ravel()) for o in cc.operands))
    a = np.empty(cc.shape.dims, dtype=object)
    for idx in itertools.product(*(range(n) for n in cc.shape.dims)):
        a[idx] = every if external == "all" else frozenset()
    deps["cc"] = a
    return _deps(instructions[at + 1 :], deps)


@pytest.mark.parametrize("endpoints", [1, 128])
def test_a_full_read_absorbs_an_unknown_read_of_the_same_parameter(endpoints):
    comp = parse_module_text(UNKNOWN_BESIDE_WHOLE).entry
    with AnalysisContext(endpoints_per_value=endpoints):
        rows = {(r.output, r.operand): r.maps for r in output_to_input(comp)}
    # both -> w: the loss reads w whole, so whatever the custom-call reads of w adds nothing
    w_whole = "(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 5], d1 in [0, 2], s0 in [0, 5], s1 in [0, 2]"
    assert [str(m) for m in rows[(0, 1)]] == [w_whole]
    # under either extreme of what the custom-call could read, the interpreter finds that read set
    for external in ("none", "all"):
        deps = _deps_with(comp, external)
        assert _reads(rows[(0, 1)], (6, 3)) == _expected(deps, "both", 1), external
        assert _reads(rows[(0, 0)], (6, 3)) == _expected(deps, "both", 0), external
    # lone -> w: only through the custom-call, unknown, one UNDEFINED map naming it
    assert len(rows[(1, 1)]) == 1 and rows[(1, 1)][0].is_undefined
    assert "external_kernel" in rows[(1, 1)][0].undefined_reason
    # mixed -> b: read element by element and through the custom-call: no full read, unknown
    assert any(m.is_undefined for m in rows[(2, 2)])
    assert sum(m.is_undefined for m in rows[(2, 2)]) == 1


# v reads p element by element and (with q) through a custom-call; its full reduction reads p whole
UNKNOWN_BESIDE_ELEMENTWISE = (
    "HloModule step\n"
    + ADD
    + """ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  cc = f32[4] custom-call(p, q), custom_call_target="external_kernel"
  n = f32[4] multiply(p, p)
  v = f32[4] add(cc, n)
  zero = f32[] constant(0)
  loss = f32[] reduce(v, zero), dimensions={0}, to_apply=add
  ROOT out = (f32[], f32[4]) tuple(loss, n)
}
"""
)


@pytest.mark.parametrize("endpoints", [1, 128])
def test_a_reduction_reads_whole_what_its_operand_reads_all_of_beside_an_unknown_read(endpoints):
    """Past the budget the custom-call's reads are one unknown part, joined with ``n``'s exact
    map of ``p``: the join keeps that every element of ``p`` is read, so the reduction reads ``p``
    whole, as it does with the maps kept side by side under the budget."""
    comp = parse_module_text(UNKNOWN_BESIDE_ELEMENTWISE).entry
    with AnalysisContext(endpoints_per_value=endpoints):
        every = bottom_up_output_to_input(comp, walk_of(comp).order)
        rows = {(r.output, r.operand): r.maps for r in output_to_input(comp)}
    p_whole = "()[s0] -> (s0), domain: s0 in [0, 3]"
    assert p_whole in [str(m) for m in every[0][(0, 0)]]
    assert [str(m) for m in rows[(0, 0)]] == [p_whole]
    for external in ("none", "all"):
        assert _reads(rows[(0, 0)], ()) == _expected(_deps_with(comp, external), "loss", 0), external
    assert len(rows[(0, 1)]) == 1 and rows[(0, 1)][0].is_undefined  # q: only through the custom-call


@pytest.mark.parametrize(
    "text, expected",
    [
        # a causal read: row d0 reads rows 0..d0, so every row reads one (row 0)
        ("(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 7], d1 in [0, 2], s0 in [0, 7], d0 - s0 in [0, 7]", True),
        # a band: row d0 reads rows d0 - 2 .. d0 + 1 inside 0..7
        ("(d0)[s0] -> (s0), domain: d0 in [0, 7], s0 in [0, 7], d0 - s0 in [-1, 2]", True),
        # rows 0..4 read nothing: s0 would have to be at least 5 below them
        ("(d0)[s0] -> (s0), domain: d0 in [0, 7], s0 in [0, 7], d0 - s0 in [5, 7]", False),
        # a constraint on a runtime value: whether a row reads depends on the run
        ("(d0)[s0]{rt0} -> (s0), domain: d0 in [0, 7], s0 in [0, 7], rt0 in [0, 8], s0 - rt0 in [-8, -1]", False),
        # a strided read: every row reads one element whatever its parity
        ("(d0)[s0] -> (s0), domain: d0 in [0, 7], s0 in [0, 3], d0 - s0 * 2 in [0, 1]", False),
    ],
)
def test_a_constrained_op_map_covers_its_value_only_where_every_element_reads(text, expected):
    m = parse_map(text)
    with AnalysisContext():
        assert covers(m, tuple(iv.size for iv in m.dims)) is expected
    if expected and not m.runtime_vars:  # proved: every element reads at least one, by brute force
        for point in itertools.product(*(range(iv.lo, iv.hi + 1) for iv in m.dims)):
            assert m.read_set(point), point


def test_covers_is_sound_on_random_unit_constraints():
    import random

    rng = random.Random(5)
    proved = 0
    for _ in range(150):
        constraints = []
        for _ in range(rng.randint(1, 3)):
            a, b = rng.sample(["d0", "d1", "s0", "s1"], 2)
            lo = rng.randint(-5, 3)
            constraints.append(f"{a} - {b} in [{lo}, {lo + rng.randint(0, 5)}]")
        text = (
            "(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 4], d1 in [0, 3], s0 in [0, 4], s1 in [0, 3], "
            + ", ".join(constraints)
        )
        try:
            m = parse_map(text)
        except ValueError:  # a constraint the parser folds away as trivially false
            continue
        if m.is_known_empty:
            continue
        with AnalysisContext():
            said = covers(m, (5, 4))
        inside = lambda p, m=m: all(iv.lo <= x <= iv.hi for iv, x in zip(m.dims, p))  # noqa: E731
        everywhere = all(inside(p) and m.read_set(p) for p in itertools.product(range(5), range(4)))
        assert said <= everywhere, text  # never claims a value every element reads where one reads nothing
        assert said == everywhere, text  # and, at unit coefficients, proves every case that holds
        proved += said
    assert proved > 10
