"""Shared by the MLIR bubble tests: the function with a chain's rewrite added, evaluated in numpy."""

from __future__ import annotations

import re

import numpy as np

from hlo_index.mlir import parse_mlir

from .mlir_numpy import run


def with_rewrite(text: str, chain) -> str:
    """``text`` with the rewrite inserted before the function's return, its result renamed
    ``%bubble_check`` (the original pair stays, so both can be evaluated)."""
    result = "%" + chain.reshape if chain.order == "slice_then_reshape" else "%" + chain.slice
    body = re.sub(re.escape(result) + r"(?=\s*=)", "%bubble_check", chain.rewrite)
    lines = text.rstrip().splitlines()
    at = max(i for i, line in enumerate(lines) if re.match(r"\s*(util\.|func\.)?return\b", line))
    return "\n".join(lines[:at] + ["  " + line for line in body.splitlines()] + lines[at:]) + "\n"


def check_rewrite(text: str, chain, args_for) -> int:
    """Evaluate the original pair and its rewrite on index-tagged inputs; ``args_for(function)``
    yields argument lists. Returns how many inputs were compared."""
    parsed = parse_mlir(with_rewrite(text, chain))
    function = next(f for f in parsed.functions() if f.sym_name.data == chain.function)
    result_name = chain.reshape if chain.order == "slice_then_reshape" else chain.slice
    by_name = {name: v for v, name in parsed.names.items()}
    compared = 0
    for args in args_for(function):
        env = run(function, args)
        want, got = env[by_name[result_name]], env[by_name["bubble_check"]]
        assert want.shape == got.shape and np.array_equal(want, got), (args, want, got)
        compared += 1
    return compared
