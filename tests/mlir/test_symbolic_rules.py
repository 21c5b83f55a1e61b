"""The rules for runtime dims (no enumeration possible): on every small valid instance, the
condition holds exactly when an exhaustive search finds a pair of the other order, and the
rewrite computes the original tensor wherever the condition holds."""

import pytest

from hlo_index.mlir import analyse_mlir_text, parse_mlir

from .helpers import check_rewrite
from .mlir_numpy import Invalid, run, tagged
from .test_conformance import condition_fn
from .test_property import exhaustive

CASES = {
    # the first expanded dim may be 1 at run time: then the second takes the whole source
    "maybe_unit": (
        """func.func @f(%x: tensor<10xf32>, %a: index) -> tensor<?x4xf32> {
  %c4 = arith.constant 4 : index
  %n = arith.muli %a, %c4 : index
  %s = tensor.extract_slice %x[0] [%n] [1] : tensor<10xf32> to tensor<?xf32>
  %e = tensor.expand_shape %s [[0, 1]] output_shape [%a, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}""",
        lambda v: [[tagged((10,)), v]],
        range(4),
        "expand",
    ),
    # a runtime source, offset and size with stride 2: rows of 2 * 4 elements, start inside a row's first 2
    "strided": (
        """func.func @f(%x: tensor<?xf32>, %o: index, %q: index) -> tensor<?x4xf32> {
  %c4 = arith.constant 4 : index
  %n = arith.muli %q, %c4 : index
  %s = tensor.extract_slice %x[%o] [%n] [2] : tensor<?xf32> to tensor<?xf32>
  %e = tensor.expand_shape %s [[0, 1]] output_shape [%q, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}""",
        None,
        None,
        "expand",
    ),
    # a runtime row count
    "runtime_rows": (
        """func.func @f(%x: tensor<?xf32>, %r: index) -> tensor<3x?xf32> {
  %c3 = arith.constant 3 : index
  %n = arith.muli %r, %c3 : index
  %s = tensor.extract_slice %x[0] [%n] [1] : tensor<?xf32> to tensor<?xf32>
  %e = tensor.expand_shape %s [[0, 1]] output_shape [3, %r] : tensor<?xf32> into tensor<3x?xf32>
  return %e : tensor<3x?xf32>
}""",
        None,
        None,
        "expand",
    ),
}

# runtime dims on both sides of the other two directions: the nested-progression rule
GENERAL = {
    "expand_then_slice": """func.func @f(%x: tensor<?xf32>, %a: index, %s: index, %o: index) -> tensor<?x2xf32> {
  %e = tensor.expand_shape %x [[0, 1]] output_shape [%a, 4] : tensor<?xf32> into tensor<?x4xf32>
  %t = tensor.extract_slice %e[0, %o] [%s, 2] [1, 1] : tensor<?x4xf32> to tensor<?x2xf32>
  return %t : tensor<?x2xf32>
}""",
    "slice_then_collapse": """func.func @f(%x: tensor<?x?xf32>, %r: index, %c: index) -> tensor<?xf32> {
  %t = tensor.extract_slice %x[0, 0] [%r, %c] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %e = tensor.collapse_shape %t [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  return %e : tensor<?xf32>
}""",
}


@pytest.mark.parametrize("name", sorted(GENERAL))
def test_nested_progression_rule_is_exact(name):
    from .test_conformance import inputs, valid

    text = GENERAL[name]
    (chain,) = analyse_mlir_text(text)
    assert chain.verdict == "conditional", chain.reason
    function = next(iter(parse_mlir(text).functions()))
    cond = condition_fn(chain.condition)
    order = "slice" if chain.order == "slice_then_reshape" else "reshape"
    kind = "expand" if "expand" in chain.direction else "collapse"
    holds, seen = [], 0
    for env, args in inputs(function, 12 if name == "expand_then_slice" else 6):
        if not valid(function, args):
            continue
        want = run(function, args)[function.body.blocks.first.last_op.operands[0]]
        seen += 1
        assert cond(env) == exhaustive(order, kind, args[0].shape, want, want.shape), (env, chain.condition)
        if cond(env):
            holds.append(args)
    assert seen > 10 and holds and len(holds) < seen
    assert check_rewrite(text, chain, lambda f: holds) == len(holds)


def instances(name):
    text, _, _, _ = CASES[name]
    function = next(iter(parse_mlir(text).functions()))
    names = [a.name_hint for a in function.body.blocks.first.args]
    if name == "maybe_unit":
        for a in range(4):
            yield {"V_a": a}, [tagged((10,)), a]
        return
    for n in range(1, 25):
        for u in range(8):
            for w in range(8):
                env = {f"D_{names[0]}_0": n, f"V_{names[1]}": u}
                args = [tagged((n,)), u]
                if len(names) > 2:
                    env[f"V_{names[2]}"] = w
                    args.append(w)
                elif w:
                    continue
                yield env, args


@pytest.mark.parametrize("name", sorted(CASES))
def test_condition_is_exact_and_rewrite_holds(name):
    text, _, _, kind = CASES[name]
    (chain,) = analyse_mlir_text(text)
    assert chain.verdict == "conditional", chain.reason
    function = next(iter(parse_mlir(text).functions()))
    cond = condition_fn(chain.condition)
    holds, seen = [], 0
    for env, args in instances(name):
        try:
            values = run(function, args)
        except (Invalid, ValueError, ZeroDivisionError):
            continue
        want = values[function.body.blocks.first.last_op.operands[0]]
        if want.size == 0:
            continue
        seen += 1
        assert cond(env) == exhaustive("slice", kind, args[0].shape, want, want.shape), (env, chain.condition)
        if cond(env):
            holds.append(args)
    assert seen >= 2 and holds
    assert check_rewrite(text, chain, lambda f: holds) == len(holds)


def test_runtime_box_of_runtime_dims_is_unprovable():
    """A runtime range of a collapse of runtime dims: which box it is depends on values no rule
    here relates, so no verdict is guessed."""
    text = """func.func @f(%x: tensor<?x?xf32>, %o: index) -> tensor<4xf32> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %s = tensor.extract_slice %c[%o] [4] [1] : tensor<?xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}"""
    (chain,) = analyse_mlir_text(text)
    assert chain.verdict == "unprovable" and chain.rewrite is None and "runtime" in chain.reason
