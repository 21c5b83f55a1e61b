"""../shared/conformance/mlir_bubble_cases.json: IREE's and MLIR's lit-test functions.

Every function gets the expected verdict; a conditional one a condition equal to the case's
``legal_condition`` on every valid input of a brute-force range; every rewrite computes the same
tensor as the original pair on index-tagged arrays (for dynamic functions, on every valid input
of the range where the condition holds)."""

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from hlo_index.mlir import analyse_mlir_text, parse_mlir

from .helpers import check_rewrite, with_rewrite
from .mlir_numpy import Invalid, run, tagged

CASES = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "mlir_bubble_cases.json"
WANT = {True: "legal", False: "illegal", "unknown": "conditional"}


def cases():
    if not CASES.exists():
        return []
    return json.loads(CASES.read_text())


def condition_fn(text: str):
    """A condition as printed (``dim(%t, 2)``, ``%x``, ``mod``, ``floordiv``, and/or) as a Python
    function of an env; trailing parenthesised notes of the case file are dropped."""
    text = re.sub(r"\s*\((with|offset)[^)]*\)\s*$", "", text.strip())
    py = re.sub(r"dim\(%(\w+), (\d+)\)", r"D_\1_\2", text)
    py = re.sub(r"%(\w+)", r"V_\1", py).replace("floordiv", "//").replace(" mod ", " % ")
    code = compile(py, text, "eval")
    return lambda env: eval(code, {}, dict(env))  # noqa: S307  (the test's own arithmetic text, no names but env's)


def function_of(text: str, name: str):
    parsed = parse_mlir(text)
    return next(f for f in parsed.functions() if f.sym_name.data == name)


def inputs(function, limit: int):
    """Every argument list with dynamic dims in 1..limit and index values in 0..limit, with the
    env naming them as conditions do."""
    block = function.body.blocks.first
    names = [a.name_hint for a in block.args]
    choices = []
    for arg in block.args:
        shape = arg.type.get_shape() if hasattr(arg.type, "get_shape") else None
        if shape is None:
            choices.append([("index", v) for v in range(limit + 1)])
        else:
            dyn = [k for k, d in enumerate(shape) if d < 0]
            options = []
            for dims in itertools.product(range(1, limit + 1), repeat=len(dyn)):
                full = list(shape)
                for k, d in zip(dyn, dims):
                    full[k] = d
                options.append(("tensor", tuple(full)))
            choices.append(options)
    for combo in itertools.product(*choices):
        env, args = {}, []
        for name, (kind, v) in zip(names, combo):
            if kind == "index":
                env[f"V_{name}"] = v
                args.append(v)
            else:
                for k, d in enumerate(v):
                    env[f"D_{name}_{k}"] = d
                args.append(tagged(v))
        yield env, args


def combinations(function, limit: int) -> int:
    """How many inputs ``inputs`` yields, weighted by the elements of the largest argument."""
    count, largest = 1, 1
    for arg in function.body.blocks.first.args:
        shape = arg.type.get_shape() if hasattr(arg.type, "get_shape") else None
        count *= (limit + 1) if shape is None else limit ** sum(1 for d in shape if d < 0)
        if shape is not None:
            largest = max(largest, abs(int(np.prod([d if d > 0 else limit for d in shape]))))
    return count * max(1, largest // 2000)


def valid(function, args) -> bool:
    try:
        values = run(function, args)
    except (Invalid, ValueError, ZeroDivisionError):
        return False
    return all(getattr(v, "size", 1) > 0 for v in values.values())


HUGE = ("131072",)  # linalg.generic over 131072x131072: checked on its condition only
LIMITS = {"iree:no_bubble_slice_dynamic": 140}


@pytest.mark.parametrize("case", cases(), ids=lambda c: c["name"])
def test_case(case):
    chains = [c for c in analyse_mlir_text(case["mlir"]) if c.direction == case["direction"]]
    assert chains, "the pair was not found"
    want = WANT[case["legal"]]
    for chain in chains:
        assert chain.verdict == want, chain.reason
        if want == "illegal":
            assert chain.rewrite is None and chain.reason
            continue
        if want == "conditional":
            assert chain.condition
            # a concrete counterexample: values where the condition fails and the pair cannot swap
            values = chain.counterexample["values"]
            env = {re.sub(r"dim\(%(\w+), (\d+)\)", r"D_\1_\2", k).replace("%", "V_"): v for k, v in values.items()}
            assert not condition_fn(chain.condition)(env) and chain.counterexample["differs"]
        if chain.rewrite is not None:  # parses and verifies in place, even where too big to run
            parse_mlir(with_rewrite(case["mlir"], chain))
        if any(h in case["mlir"] for h in HUGE):
            continue
        function = function_of(case["mlir"], chain.function)
        mine = condition_fn(chain.condition) if chain.condition else (lambda env: True)
        theirs = condition_fn(case["legal_condition"]) if want == "conditional" else (lambda env: True)
        limit = LIMITS.get(case["name"], 40)
        while limit > 2 and combinations(function, limit) > 20000:
            limit -= 1
        checked, agree = [], 0
        for env, args in inputs(function, limit):
            if not valid(function, args):
                continue
            assert mine(env) == theirs(env), (env, chain.condition, case["legal_condition"])
            agree += 1
            if mine(env):
                checked.append(args)
        assert agree > 0
        assert chain.rewrite is not None, chain.reason
        step = max(1, len(checked) // 200)
        picked = checked[::step]
        assert check_rewrite(case["mlir"], chain, lambda f, picked=picked: picked) > 0


def test_the_huge_case_condition():
    """131072 sliced to %arg2 = %arg3 * %arg3 and expanded to [%arg3, %arg3]: the expand needs
    %arg3 * %arg3 == %arg2 <= 131072; on all those values the conditions agree."""
    case = next((c for c in cases() if c["name"] == "iree:bubble_up_expand_of_extract_of_expand"), None)
    if case is None:
        pytest.skip("conformance cases absent")
    chain = next(c for c in analyse_mlir_text(case["mlir"]) if c.direction == case["direction"])
    mine, theirs = condition_fn(chain.condition), condition_fn(case["legal_condition"])
    for a3 in range(1, 363):
        env = {"V_arg3": a3, "V_arg2": a3 * a3}
        assert mine(env) == theirs(env)


def test_every_case_is_analysed_quickly_and_deterministically():
    for case in cases():
        a = [c.to_json() for c in analyse_mlir_text(case["mlir"])]
        b = [c.to_json() for c in analyse_mlir_text(case["mlir"])]
        assert json.dumps(a) == json.dumps(b)
