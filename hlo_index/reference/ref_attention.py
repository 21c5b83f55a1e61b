"""Reference read sets of TransformerEngine's fused attention (BSHD q, k, v; no bias, no dropout;
no mask or the causal one).

Written from the attention formulas, pair by pair: query row i and key row j of batch b interact
unless the causal mask hides j from i (j > i). Each output element collects the pairs it sums
over and, per pair, the elements the formula touches:
  out[b,i,h,e]   = sum_j P_ij v[b,j,g,e]          P_ij = softmax_j(q_i . k_j)
  aux[b,h,i,0]   = log sum_j exp(q_i . k_j)
  dq[b,i,h,:]    = sum_j dS_ij k_j                dS_ij = P_ij (dout_i . v_j - dout_i . out_i)
  dk[b,j,g,:]    = sum_{h in g, i} dS_ij q_i      (P_ij recomputed from q_i, k_j and aux_i)
  dv[b,j,g,e]    = sum_{h in g, i} P_ij dout[b,i,h,e]
The sequence lengths are not read without a padding mask. The forward's rng_state row 0 holds the
seed's first int64 (two u32) and an offset kept on the host.
"""

from __future__ import annotations

from ..hlo.backend_config import parse_typed_attributes
from ..hlo.model import Instruction
from . import NoReference

FORWARD = "te_fused_attn_forward_ffi"
BACKWARD = "te_fused_attn_backward_ffi"


def attention_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    cfg = parse_typed_attributes(instr.attrs.get("backend_config")) or {}
    forward = instr.attr("custom_call_target") == FORWARD
    if cfg.get("qkv_layout") != 9 or cfg.get("bias_type", 0) != 0 or cfg.get("dropout_probability", 0.0) != 0.0:
        raise NoReference("fused attention: only BSHD_BSHD_BSHD without bias or dropout has a reference")
    mask = cfg.get("mask_type")
    if mask not in (0, 2):
        raise NoReference(f"fused attention: mask_type {mask} has no reference (none, 0, and causal, 2, have)")
    causal = mask == 2
    q_shape, k_shape, v_shape = (o.shape.dims for o in instr.operands[:3])
    q_rows, heads, features = q_shape[1:]
    kv_rows, kv_heads, v_features = k_shape[1], k_shape[2], v_shape[3]
    per_group = heads // kv_heads
    roles = {0: "q", 1: "k", 2: "v", 4: "seed"} if forward else {0: "q", 1: "k", 2: "v", 4: "aux", 6: "out", 7: "dout"}
    role = roles.get(operand_index)
    outputs = ("out", "aux", "rng_state") if forward else ("dq", "dk", "dv")
    output = outputs[output_index] if output_index < len(outputs) else "nothing"
    if output == "nothing" or role is None:
        return set()
    if output == "rng_state":
        row, column = out_point
        return {(column,)} if role == "seed" and row == 0 and column < 2 else set()
    if role == "seed":
        return set()
    b = out_point[0]

    def unmasked(i: int, j: int) -> bool:
        return not causal or j <= i

    # the (i, j, h) pairs this element sums over, and the feature it is at (or None: all)
    if output in ("out", "dq"):
        _, i0, h0, at = out_point
        pairs = [(i0, j, h0) for j in range(kv_rows) if unmasked(i0, j)]
    elif output == "aux":
        _, h0, i0, _ = out_point
        pairs, at = [(i0, j, h0) for j in range(kv_rows) if unmasked(i0, j)], None
    else:
        _, j0, g0, at = out_point
        group = range(g0 * per_group, (g0 + 1) * per_group)
        pairs = [(i, j0, h) for h in group for i in range(q_rows) if unmasked(i, j0)]
    found: set = set()
    for i, j, h in pairs:
        g = h // per_group
        if role == "q":
            found.update((b, i, h, f) for f in range(features))
        elif role == "k":
            found.update((b, j, g, f) for f in range(features))
        elif role == "v" and output == "out":
            found.add((b, j, g, at))
        elif role == "v" and output in ("dq", "dk"):
            found.update((b, j, g, e) for e in range(v_features))
        elif role == "aux" and output in ("dq", "dk", "dv"):
            found.add((b, h, i, 0))
        elif (role == "out" and output in ("dq", "dk")) or (role == "dout" and output in ("dq", "dk")):
            found.update((b, i, h, e) for e in range(v_features))
        elif role == "dout" and output == "dv":
            found.add((b, i, h, at))
    return found
