"""Composed maps of data-movement fusions against a numpy run of the whole fused computation.

Every parameter is filled with its own element tags (distinct integers); the fused computation is
executed op by op with numpy; each output element then holds the tag of the one parameter element
it came from. The composed output-to-input maps must give exactly that element, and nothing for
every other operand.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

from hlo_index.fusion import output_to_input
from hlo_index.hlo import load, parse_module_text

from . import hlo_samples as s

DATA_MOVEMENT_OPS = {"parameter", "transpose", "reshape", "slice", "reverse", "broadcast", "concatenate", "pad", "copy"}


def _broadcast(x, instr):
    dims = instr.attr("dimensions", ())
    shape = [1] * instr.shape.rank
    for i, d in enumerate(dims):
        shape[d] = x.shape[i]
    return np.broadcast_to(x.reshape(shape), instr.shape.dims)


def _pad(x, value, instr):
    out = np.full(instr.shape.dims, value.item(), dtype=np.int64)
    src = [slice(None)] * x.ndim
    dst = []
    for i, p in enumerate(instr.attr("padding")):
        step = p.interior + 1
        positions = p.low + step * np.arange(x.shape[i])
        keep = (positions >= 0) & (positions < instr.shape.dims[i])
        src[i] = np.nonzero(keep)[0]
        dst.append(positions[keep])
    out[np.ix_(*dst)] = x[np.ix_(*src)]
    return out


def run(comp, params):
    """Evaluate a data-movement computation in numpy (row-major logical indexing, as in HLO)."""
    values = {}
    for instr in comp.instructions:
        ops = [values[id(o)] for o in instr.operands]
        op = instr.opcode
        if op == "parameter":
            v = params[instr.parameter_number]
        elif op == "transpose":
            v = np.transpose(ops[0], instr.attr("dimensions"))
        elif op == "reshape":
            v = ops[0].reshape(instr.shape.dims)
        elif op == "copy":
            v = ops[0]
        elif op == "slice":
            v = ops[0][tuple(slice(d.start, d.limit, d.stride) for d in instr.attr("slice"))]
        elif op == "reverse":
            v = np.flip(ops[0], axis=tuple(instr.attr("dimensions")))
        elif op == "broadcast":
            v = _broadcast(ops[0], instr)
        elif op == "concatenate":
            v = np.concatenate(ops, axis=instr.attr("dimensions")[0])
        elif op == "pad":
            v = _pad(ops[0], ops[1], instr)
        else:
            raise AssertionError(op)
        values[id(instr)] = np.asarray(v)
    return values[id(comp.root)]


def check_fusion(fusion):
    comp = fusion.called["calls"]
    params, offset, owner = [], 0, []
    for n in range(len(fusion.operands)):
        shape = comp.parameters[n].shape.dims
        size = int(np.prod(shape, dtype=np.int64))
        params.append((offset + np.arange(size, dtype=np.int64)).reshape(shape))
        owner.append((offset, shape))
        offset += size
    out = run(comp, params)
    rows = {r.operand: r for r in output_to_input(fusion)}
    for point in np.ndindex(*out.shape):
        tag = int(out[point])
        for n, (start, shape) in enumerate(owner):
            got = set()
            for m in rows[n].maps:
                got |= m.read_set(point)
            size = int(np.prod(shape, dtype=np.int64))
            expected = (
                {tuple(int(i) for i in np.unravel_index(tag - start, shape))} if start <= tag < start + size else set()
            )
            if not shape:
                expected = {()} if start == tag else set()
            assert got == expected, (fusion.name, point, n, got, expected)


def pure_data_movement(fusion) -> bool:
    comp = fusion.called.get("calls")
    return (
        comp is not None
        and not comp.root.shape.is_tuple
        and all(i.opcode in DATA_MOVEMENT_OPS and not i.shape.is_tuple for i in comp.instructions)
    )


@pytest.mark.parametrize(
    "text",
    [
        s.DATA_MOVEMENT[0],
        s.DATA_MOVEMENT[1],
        s.RESHAPE_ROUND_TRIP,
        s.slice_of_concat(0, 4),
        s.slice_of_concat(3, 9),
        s.slice_of_concat(6, 11),
    ],
)
def test_handwritten_data_movement_fusions(text):
    [fusion] = parse_module_text(text).fusions
    assert pure_data_movement(fusion)
    check_fusion(fusion)


CORPUS = os.path.join(os.path.dirname(__file__), "../../../shared/corpus")


def test_corpus_data_movement_fusions():
    checked = 0
    for path in sorted(glob.glob(os.path.join(CORPUS, "**", "*after_optimizations*.txt"), recursive=True)):
        for result in load(path):
            for fusion in result.module.fusions if result.module else ():
                if pure_data_movement(fusion) and fusion.shape.num_elements <= 4096:
                    check_fusion(fusion)
                    checked += 1
    if not os.path.isdir(CORPUS):
        pytest.skip("corpus not found")
    assert checked >= 10
