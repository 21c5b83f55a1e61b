"""A small numpy interpreter for the MLIR the bubble tests use (independent of hlo_index's maps):
tensors are index-tagged arrays, index values are ints. An op whose operands are out of range
(a slice past the end, an expand whose sizes do not multiply out) raises ``Invalid``."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import affine, arith, func, tensor
from xdsl.ir.affine import AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineSymExpr

from hlo_index.mlir.util_dialect import UtilReturnOp

DYN = -(1 << 63)


class Invalid(Exception):
    pass


def _affine(e, dims, syms):
    if isinstance(e, AffineConstantExpr):
        return e.value
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineSymExpr):
        return syms[e.position]
    a, b = _affine(e.lhs, dims, syms), _affine(e.rhs, dims, syms)
    return {
        AffineBinaryOpKind.Add: lambda: a + b,
        AffineBinaryOpKind.Mul: lambda: a * b,
        AffineBinaryOpKind.Mod: lambda: a % b,
        AffineBinaryOpKind.FloorDiv: lambda: a // b,
        AffineBinaryOpKind.CeilDiv: lambda: -(-a // b),
    }[e.kind]()


def _mixed(static, dynamic, env):
    dyn = iter(dynamic)
    return [env[next(dyn)] if s == DYN else s for s in static.get_values()]


def run(function, args: list) -> dict:
    """Evaluate ``function`` (an xDSL func.func / util.func) on ``args``; returns every value."""
    block = function.body.blocks.first
    env = dict(zip(block.args, args))
    for op in block.ops:
        if isinstance(op, (func.ReturnOp, UtilReturnOp)):
            break
        if isinstance(op, arith.ConstantOp):
            env[op.result] = op.value.value.data
        elif isinstance(
            op,
            (
                arith.AddiOp,
                arith.SubiOp,
                arith.MuliOp,
                arith.DivUIOp,
                arith.DivSIOp,
                arith.RemUIOp,
                arith.RemSIOp,
                arith.FloorDivSIOp,
            ),
        ):
            a, b = env[op.lhs], env[op.rhs]
            if (
                isinstance(op, (arith.DivUIOp, arith.DivSIOp, arith.RemUIOp, arith.RemSIOp, arith.FloorDivSIOp))
                and b == 0
            ):
                raise Invalid("division by zero")
            env[op.result] = (
                {arith.AddiOp: a + b, arith.SubiOp: a - b, arith.MuliOp: a * b}.get(type(op))
                if isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MuliOp))
                else (
                    a % b
                    if isinstance(op, (arith.RemUIOp, arith.RemSIOp))
                    else (int(a / b) if isinstance(op, arith.DivSIOp) else a // b)
                )
            )
        elif isinstance(op, arith.CmpiOp):
            a, b = env[op.lhs], env[op.rhs]
            pred = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"][op.predicate.value.data]
            env[op.result] = {
                "eq": a == b,
                "ne": a != b,
                "slt": a < b,
                "sle": a <= b,
                "sgt": a > b,
                "sge": a >= b,
                "ult": a < b,
                "ule": a <= b,
                "ugt": a > b,
                "uge": a >= b,
            }[pred]
        elif isinstance(op, arith.SelectOp):
            env[op.result] = env[op.lhs] if env[op.cond] else env[op.rhs]
        elif isinstance(op, affine.ApplyOp):
            vals = [env[o] for o in op.mapOperands]
            m = op.map.data
            env[op.result] = _affine(m.results[0], vals[: m.num_dims], vals[m.num_dims :])
        elif isinstance(op, tensor.DimOp):
            env[op.result] = env[op.source].shape[env[op.index]]
        elif isinstance(op, tensor.ExtractSliceOp):
            src = env[op.source]
            offs = _mixed(op.static_offsets, op.offsets, env)
            sizes = _mixed(op.static_sizes, op.sizes, env)
            strides = _mixed(op.static_strides, op.strides, env)
            for o, n, s, d in zip(offs, sizes, strides, src.shape):
                if o < 0 or n < 0 or s < 1 or (n > 0 and o + (n - 1) * s >= d):
                    raise Invalid(f"slice {o}:{n}:{s} out of a dim of {d}")
            data = src[tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in zip(offs, sizes, strides))]
            # MLIR's rank-reduction mask: static sizes matched left to right against the result
            # type, an unmatched static 1 dropped
            reduced, keep, j = op.result.type.get_shape(), [], 0
            for size, static in zip(sizes, op.static_sizes.get_values()):
                if (j < len(reduced) and static == reduced[j]) or (
                    static == DYN and j < len(reduced) and reduced[j] < 0
                ):
                    keep.append(size)
                    j += 1
                elif static != 1:
                    raise Invalid("not a rank reduction")
            env[op.result] = data.reshape(keep)
        elif isinstance(op, tensor.CastOp):
            src = env[op.source]
            if any(d >= 0 and d != n for d, n in zip(op.dest.type.get_shape(), src.shape)):
                raise Invalid("tensor.cast to an incompatible static shape")
            env[op.dest] = src
        elif isinstance(op, tensor.ExpandShapeOp):
            src = env[op.src]
            shape = _mixed(op.static_output_shape, op.dynamic_output_shape, env)
            for g, group in enumerate(op.reassociation.data):
                if int(np.prod([shape[int(i.value.data)] for i in group.data])) != src.shape[g]:
                    raise Invalid(f"expand of dim {g} ({src.shape[g]}) into {shape}")
            env[op.result] = src.reshape(shape)
        elif isinstance(op, tensor.CollapseShapeOp):
            src = env[op.src]
            shape = [int(np.prod([src.shape[int(i.value.data)] for i in g.data])) for g in op.reassociation.data]
            env[op.result] = src.reshape(shape)
        else:
            raise NotImplementedError(op.name)
    return env


def tagged(shape) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
