"""XLA's ``HloCostAnalysis`` (and ``GpuHloCostAnalysis``) per instruction: flops,
transcendentals, bytes accessed, bytes read per operand, bytes written, operand utilization.

``HloCost(options).of(instr)`` costs one instruction (a fusion through its fused computation);
``module_totals(module, options)`` sums the entry computation as XLA sums a module. Fused
instructions' utilizations (how many times each element of a fused value is used, propagated
from the root) stay available for the performance model (``utilization``,
``common_elementwise_utilization``).
"""

from __future__ import annotations

import math
import operator
import struct
from array import array
from collections.abc import Callable, Hashable, Iterator, Sequence
from functools import reduce
from itertools import chain, compress, islice, repeat
from operator import attrgetter
from typing import cast

from ...context import current, register_table
from ...hlo.model import Computation, Instruction
from .flops import (
    COSTED_ELEMENTWISE,
    CUBLAS_TARGETS,
    ELEMENTWISE,
    CostOptions,
    concatenate_gpu_utilization,
    elementwise_flops,
    instruction_flops,
    is_cublas,
    is_dnn_convolution,
    triton_cost_estimate,
    window_size,
)
from .shapes import element_bytes, elements, elements_recursive, leaves, shape_bytes_of, shape_sizes

# numpy is imported where a sum in XLA's order rounds: a module whose sums are exact (most
# modules) never needs it; single float32 operations are rounded by ``f32``.
DEFAULT_OPTIONS = CostOptions()
PASS_THROUGH = ELEMENTWISE | {"tuple", "get-tuple-element"}
FREE = {"parameter", "constant", "get-tuple-element", "bitcast", "domain", "after-all", "add-dependency"}
UNKNOWN = -1.0
# Ops ``instruction_flops`` counts no flop or transcendental for, whatever the shapes (its last case).
FLOP_FREE = frozenset(
    {
        "copy",
        "parameter",
        "constant",
        "bitcast",
        "broadcast",
        "reshape",
        "slice",
        "dynamic-slice",
        "dynamic-update-slice",
        "tuple",
        "get-tuple-element",
    }
)
# Opcodes whose figures follow from the opcode, the result shape and the operand shapes alone
# (no attributes, called computations or backend config): instructions equal in those share
# one ``Properties`` (a fused computation repeats the same elementwise ops on the same shapes).
SHAPE_ONLY = COSTED_ELEMENTWISE | FLOP_FREE
NO_FLOPS = (0.0, 0.0)
# Ops whose (flops, transcendentals, bytes accessed, output bytes) are all 0.0 under either
# variant (no flop, ``_zero``'s bytes): most of a module's entry (its parameters and the
# elements and bitcasts taken of them), summed without building their figures.
ALL_ZERO = frozenset(FREE & FLOP_FREE)
ZERO_ROW = (0.0, 0.0, 0.0, 0.0)


class FusedScan:
    """A fused computation read once: the exact float32 sums of its instructions' (flops,
    transcendentals) (None where a sum rounds), its constants of more than one element, and the
    bytes the generic analysis reads of each parameter (``HloCost._scan``)."""

    __slots__ = ("flop_sums", "constants", "reads")

    def __init__(self, flop_sums: list[float | None], constants: list[Instruction], reads: dict[int, int]) -> None:
        self.flop_sums = flop_sums
        self.constants = constants
        self.reads = reads


class Properties:
    """One instruction's figures (XLA's ``Properties``; -1 = unknown). Plain records (no
    dataclass: its generated methods would be compiled on every import)."""

    __slots__ = (
        "flops",
        "transcendentals",
        "bytes_accessed",
        "output_bytes",
        "operand_bytes",
        "operand_utilization",
        "output_bytes_per_leaf",
    )

    def __init__(
        self,
        flops: float = 0.0,
        transcendentals: float = 0.0,
        bytes_accessed: float = 0.0,
        output_bytes: float = 0.0,
        operand_bytes: list | None = None,
        operand_utilization: list | None = None,
        output_bytes_per_leaf: list | None = None,
    ) -> None:
        self.flops = flops
        self.transcendentals = transcendentals
        self.bytes_accessed = bytes_accessed
        self.output_bytes = output_bytes
        self.operand_bytes: list = [] if operand_bytes is None else operand_bytes
        self.operand_utilization: list = [] if operand_utilization is None else operand_utilization
        self.output_bytes_per_leaf: list = [] if output_bytes_per_leaf is None else output_bytes_per_leaf

    def __repr__(self) -> str:
        return "Properties(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"


class HloCost:
    """Costs under one set of options, memoised per instruction.

    ``fusion_key(fusion)``: a structural key (None: not shared); fusions with equal keys share
    one ``Properties`` (transformer layers repeat their fusions). A shared fusion's fused
    instructions get no ``utilization`` entries of their own, so a cost with a key serves sums
    and per-target figures, not the producer / consumer what-if (which reads them)."""

    def __init__(self, options: CostOptions = DEFAULT_OPTIONS, fusion_key: Callable | None = None) -> None:
        self.options = options
        self._fusion_key = fusion_key
        self._shared: dict[Hashable, Properties] = {}
        # (opcode, id of the result shape, ids of the operand shapes) -> (the shapes, Properties);
        # the entry keeps the shapes alive, so the ids stay theirs (the parser shares equal shapes)
        self._by_shapes: dict[tuple, tuple] = {}
        # (opcode, id of the result shape) -> (the shape, (flops, transcendentals)) of elementwise ops
        self._elementwise_flops: dict[tuple, tuple] = {}
        self._props: dict[int, Properties] = {}
        self._users: dict[int, tuple] = {}
        # id(computation) -> (computation, its ``_generic_reads``)
        self._reads: dict[int, tuple] = {}
        self._sub: dict[int, tuple[float, float]] = {}
        self._totals: dict[int, Properties] = {}
        # fused instruction -> utilization, elementwise-use roots, root utilization
        self.utilization: dict[int, float] = {}
        self._roots: dict[int, set] = {}
        self._root_util: dict[int, float] = {}
        # id(shape) -> (the shape, ``elements_recursive`` of it); the entry keeps the shape: its id stays
        self._element_counts: dict[int, tuple] = {}
        self._bytes = shape_sizes()

    # ---- public -------------------------------------------------------------------------
    def of(self, instr: Instruction) -> Properties:
        key = id(instr)
        props = self._props.get(key)
        if props is None:
            shared = self._fusion_key(instr) if self._fusion_key is not None and instr.opcode == "fusion" else None
            if shared is not None:
                props = self._shared.get(shared)
            if props is None:
                op = instr.opcode
                if op in SHAPE_ONLY:
                    props = self._compute_shared(instr, op)
                elif op == "custom-call" and instr.attrs.get("custom_call_target") in CUBLAS_TARGETS:
                    # a cuBLAS gemm's figures read its target, its backend config (the dot's
                    # dimensions) and its shapes: a model's layers repeat their gemms
                    config = instr.attrs.get("backend_config")
                    if isinstance(config, str):
                        props = self._compute_shared(instr, instr.attrs["custom_call_target"], config)
                    else:
                        props = self._compute(instr)
                else:
                    props = self._compute(instr)
                if shared is not None:
                    self._shared[shared] = props
            self._props[key] = props
        return props

    def _compute_shared(self, instr: Instruction, *reads: str) -> Properties:
        """``_compute``, once for the instructions equal in ``reads`` (what their figures read
        besides their shapes) and in their result and operand shapes."""
        shapes = (instr.shape, *(o.shape for o in instr.operands))
        key = (*reads, *map(id, shapes))
        hit = self._by_shapes.get(key)
        if hit is None:
            hit = self._by_shapes[key] = (shapes, self._compute(instr))
        return hit[1]

    def computation_totals(self, comp) -> Properties:
        """The sum over a computation's instructions (XLA's ``properties()`` after ``Accept``)."""
        totals = self._totals.get(id(comp))
        if totals is None:
            totals = computation_totals_under((self,), comp)[0]
        return totals

    def _sums(
        self, comp, figures: Callable[[Instruction], tuple], width: int, zero: frozenset = frozenset()
    ) -> list[float]:
        """Per figure (``width`` of them), its float32 sum over the computation as XLA sums it.
        ``zero``: opcodes whose figures are all 0.0, which add nothing to an exact sum."""
        rows = [figures(i) for i in comp.instructions if i.opcode not in zero]
        return self._rounded_sums(comp, rows, figures, width)

    def _rounded_sums(
        self, comp, rows: list[tuple], figures: Callable[[Instruction], tuple], width: int
    ) -> list[float]:
        """The float32 sums of ``rows`` (``figures`` of the computation's instructions, the all-zero
        ones possibly left out) as XLA sums them."""
        sums = exact_float32_sums(rows, width)
        if None in sums:
            return _rounded_in_order(sums, list(map(figures, shared_visit_order(comp))), width)
        return sums  # type: ignore[return-value]  # no None left

    def _all_figures(self, instr: Instruction) -> tuple:
        if instr.opcode in ALL_ZERO:
            return ZERO_ROW
        p = self.of(instr)
        return (p.flops, p.transcendentals, p.bytes_accessed, p.output_bytes)

    def _flop_figures(self, instr: Instruction) -> tuple:
        """(flops, transcendentals) of ``of(instr)``, without building its figures where the
        opcode and the result shape decide them (most of a fused computation)."""
        op = instr.opcode
        if op in FLOP_FREE:
            return NO_FLOPS
        if op not in COSTED_ELEMENTWISE:
            p = self._props.get(id(instr))
            if p is None and op not in _CALLERS:
                # no called computation's figures: its flops are ``instruction_flops``' alone, and
                # the rest of its figures need not be built (a generic fused instruction's are never read)
                return instruction_flops(instr, self.options, self._sub_cost)
            p = p or self.of(instr)
            return (p.flops, p.transcendentals)
        shape = instr.shape
        hit = self._elementwise_flops.get((op, id(shape)))
        if hit is None:  # the entry keeps the shape alive, so the id stays its
            hit = self._elementwise_flops[(op, id(shape))] = (shape, elementwise_flops(op, shape, self.options))
        return hit[1]

    def common_elementwise_utilization(self, a: Instruction, b: Instruction) -> float:
        """The utilization of the roots both fused values reach through elementwise uses only."""
        ra, rb = self._roots.get(id(a), set()), self._roots.get(id(b), set())
        return float(sum(self._root_util[r] for r in ra & rb))

    # ---- the handlers -------------------------------------------------------------------
    def _sub_cost(self, comp) -> tuple[float, float]:
        """(flops, transcendentals) of ``computation_totals(comp)``: a fusion or a reduction
        reads only these, and without the bytes the visiting order rarely matters."""
        key = id(comp)
        hit = self._sub.get(key)
        if hit is None:
            totals = self._totals.get(key)
            if totals is not None:
                hit = (totals.flops, totals.transcendentals)
            else:
                flops, transcendentals = self._sums(comp, self._flop_figures, 2, FLOP_FREE)
                hit = (flops, transcendentals)
            self._sub[key] = hit
        return hit

    def _compute(self, instr: Instruction) -> Properties:
        op = instr.opcode
        if op == "fusion":
            inner = _custom_gather_or_scatter(instr)
            if inner is not None:
                return self._compute(inner)
            p = Properties()
            self._fusion(instr, p)  # sets every figure
            return p
        ops = instr.operands
        # a tuple-shaped result counts its arrays (the tuple instruction alone, its index table)
        shape = instr.shape
        out = float(sum(self._bytes(s) for s in leaves(shape)) if shape.is_tuple else self._bytes(shape))
        p = Properties(
            output_bytes=out,
            operand_bytes=[float(self._bytes(o.shape)) for o in ops],
            operand_utilization=[1.0] * len(ops),
        )
        p.bytes_accessed = out + sum(p.operand_bytes)
        if op in ("call", "async-start", "while", "conditional"):
            self._called(instr, p)
            return p
        p.flops, p.transcendentals = instruction_flops(instr, self.options, self._sub_cost)
        getattr(self, "_h_" + op.replace("-", "_"), _nothing)(instr, p)
        if self.options.gpu:
            if op == "concatenate":
                for k in range(len(ops)):
                    u = concatenate_gpu_utilization(instr, k)
                    if u is not None:
                        p.operand_utilization[k] = u
            elif op == "reduce":
                self._gpu_reduce(instr, p)
            elif op in ("all-gather", "all-gather-start", "reduce-scatter"):
                self._gpu_gather_scatter(instr, p)
            elif op in ("all-reduce", "all-reduce-start"):
                p.bytes_accessed = p.output_bytes = self._leaf_bytes(instr.shape)
            elif op == "custom-call":
                self._gpu_custom_call(instr, p)
        return p

    def _zero(self, instr: Instruction, p: Properties) -> None:
        p.bytes_accessed = p.output_bytes = 0.0
        p.operand_bytes = [0.0] * len(instr.operands)

    _h_parameter = _h_constant = _h_domain = _h_after_all = _h_add_dependency = _zero
    _h_bitcast = _zero

    def _h_get_tuple_element(self, instr, p):
        self._zero(instr, p)

    def _h_transpose(self, instr, p):
        if transpose_is_bitcast(instr):
            self._zero(instr, p)

    def _h_tuple(self, instr, p):
        p.bytes_accessed = p.output_bytes = float(self._bytes(instr.shape))
        p.operand_bytes = [0.0] * len(instr.operands)

    def _h_slice(self, instr, p):
        size = float(self._bytes(instr.shape))
        p.bytes_accessed, p.output_bytes, p.operand_bytes[0] = 2 * size, size, size
        p.operand_utilization[0] = elements(instr.shape) / max(elements(instr.operands[0].shape), 1)

    def _h_dynamic_slice(self, instr, p):
        size = float(self._bytes(instr.shape))
        index = float(self._bytes(instr.operands[1].shape)) if len(instr.operands) > 1 else 0.0
        p.bytes_accessed, p.output_bytes, p.operand_bytes[0] = 2 * size + index, size, size
        p.operand_utilization[0] = elements(instr.shape) / max(elements(instr.operands[0].shape), 1)

    def _h_dynamic_update_slice(self, instr, p):
        update = float(self._bytes(instr.operands[1].shape))
        index = float(self._bytes(instr.operands[2].shape)) if len(instr.operands) > 2 else 0.0
        p.bytes_accessed, p.output_bytes = 2 * update + index, update
        p.operand_bytes[0] = 0.0
        p.operand_utilization[0] = (elements(instr.shape) - elements(instr.operands[1].shape)) / max(
            elements(instr.shape), 1
        )

    def _h_broadcast(self, instr, p):
        if self.options.count_multiple_input_accesses:
            p.operand_bytes[0] = float(elements(instr.shape))
            p.operand_utilization[0] = elements(instr.shape) / max(elements(instr.operands[0].shape), 1)

    def _h_reduce_window(self, instr, p):
        if self.options.count_multiple_input_accesses:
            n = elements(instr.shape.tuple_shapes[0] if instr.shape.is_tuple else instr.shape)
            w = window_size(instr)
            operand = instr.operands[0].shape
            p.operand_utilization[0] = n * w / max(elements(operand), 1)
            p.operand_bytes[0] = float(n * w * element_bytes(operand.element_type))

    def _leaf_bytes(self, shape) -> float:
        """The bytes of every array in ``shape`` (a tuple's arrays, not its table of pointers)."""
        return float(sum(self._bytes(s) for s in leaves(shape)))

    @staticmethod
    def _output_as_parsed(p: Properties, out: float) -> None:
        """``p`` with the output XLA's parser gives the op in place of the written one."""
        p.bytes_accessed += out - p.output_bytes
        p.output_bytes = out

    def _h_outfeed(self, instr, p):
        # what it sends: every array in each operand (a tuple operand's arrays, not its index table)
        p.operand_bytes = [self._leaf_bytes(o.shape) for o in instr.operands]
        p.bytes_accessed = sum(p.operand_bytes)

    def _h_send(self, instr, p):
        # XLA's parser gives a send the shape (its first operand's, u32[], token[]), whatever is written
        if instr.operands:
            self._output_as_parsed(p, self._leaf_bytes(instr.operands[0].shape) + _CONTEXT_BYTES)

    def _h_recv_done(self, instr, p):
        # XLA's parser gives a recv-done its recv's data shape, whatever shape is written
        recv = instr.operands[0].shape if instr.operands else None
        if recv is not None and recv.tuple_shapes:
            self._output_as_parsed(p, self._leaf_bytes(recv.tuple_shapes[0]))

    def _h_gather(self, instr, p):
        size = float(self._bytes(instr.shape))
        index = float(self._bytes(instr.operands[1].shape))
        p.bytes_accessed, p.output_bytes = 2 * size + index, size
        p.operand_bytes[0], p.operand_bytes[1] = size, index
        p.operand_utilization[0] = elements(instr.shape) / max(elements(instr.operands[0].shape), 1)

    def _h_scatter(self, instr, p):
        n = len(instr.operands) // 2
        total = 0.0
        for i in range(n):
            update = float(self._bytes(instr.operands[n + 1 + i].shape))
            p.operand_bytes[i] = p.operand_bytes[n + 1 + i] = update
            total += update
        index = float(self._bytes(instr.operands[n].shape))
        p.operand_bytes[n] = index
        p.bytes_accessed, p.output_bytes = 3 * total + index, total

    def _h_triangular_solve(self, instr, p):
        a, b = (float(self._bytes(o.shape)) for o in instr.operands[:2])
        p.bytes_accessed = p.output_bytes + a / 2 + b
        p.operand_bytes[0] = b  # XLA sets operand 0 twice; the second (operand 1's size) stands

    def _h_cholesky(self, instr, p):
        a = float(self._bytes(instr.operands[0].shape))
        p.bytes_accessed, p.output_bytes, p.operand_bytes[0] = a, a / 2, a / 2

    def _h_custom_call(self, instr, p):
        if self.options.gpu and (
            is_cublas(instr) or is_dnn_convolution(instr) or triton_cost_estimate(instr) is not None
        ):
            return  # the GPU handler below
        p.bytes_accessed = p.output_bytes = UNKNOWN
        p.operand_bytes = [UNKNOWN] * len(instr.operands)

    # ---- GPU overrides ----------------------------------------------------------------
    def _gpu_custom_call(self, instr, p):
        estimate = triton_cost_estimate(instr)
        if estimate is not None:
            p.bytes_accessed = float(estimate.get("bytes_accessed", UNKNOWN))
            return
        if (is_cublas(instr) or is_dnn_convolution(instr)) and instr.shape.is_tuple:
            first_out = float(self._bytes(instr.shape.tuple_shapes[0]))
            p.bytes_accessed += first_out - p.output_bytes
            p.output_bytes = first_out

    def _gpu_reduce(self, instr, p):
        n = len(instr.operands) // 2
        out_shape = instr.shape.tuple_shapes[0] if instr.shape.is_tuple else instr.shape
        out_elements = elements(out_shape)
        written = self._leaf_bytes(instr.shape)
        total = written
        for k, operand in enumerate(instr.operands):
            size = float(self._bytes(operand.shape))
            if k >= n:
                size *= out_elements  # the init value is read once per output element
            p.operand_bytes[k] = size
            total += size
        p.output_bytes, p.bytes_accessed = written, total

    def _gpu_gather_scatter(self, instr, p):
        ranks = collective_ranks(instr)
        if instr.opcode == "reduce-scatter":
            shard = sum(self._bytes(s) for s in leaves(instr.shape))
        else:
            shard = sum(self._bytes(o.shape) for o in instr.operands)
        # ring: (N - 1) sends and N - 1 receives of a shard plus the local copies
        p.bytes_accessed = float((3 * ranks - 1) * shard)

    # ---- computations ------------------------------------------------------------------
    def _called(self, instr: Instruction, p: Properties) -> None:
        op = instr.opcode
        if op == "while":
            parts = [self.computation_totals(instr.called["body"]), self.computation_totals(instr.called["condition"])]
        elif op == "conditional":
            branches = [
                c
                for role, c in instr.called.items()
                if role in ("true_computation", "false_computation") or role.startswith("branch")
            ]
            totals = [self.computation_totals(c) for c in branches]
            if totals:
                p.flops = max(t.flops for t in totals)
                p.transcendentals = max(t.transcendentals for t in totals)
                p.bytes_accessed = max(t.bytes_accessed for t in totals)
                p.output_bytes = max(t.output_bytes for t in totals)
            return
        else:
            callee = next(iter(instr.called.values()), None)
            parts = [self.computation_totals(callee)] if callee is not None else []
        p.flops = sum(t.flops for t in parts)
        p.transcendentals = sum(t.transcendentals for t in parts)
        p.bytes_accessed = sum(t.bytes_accessed for t in parts)
        p.output_bytes = sum(t.output_bytes for t in parts)
        if op == "async-start" and self.options.gpu:
            wrapped = next(iter(instr.called.values())).root
            if wrapped is not None and wrapped.opcode in ("reduce-scatter", "all-gather"):
                inner = self.of(wrapped)
                p.bytes_accessed = inner.bytes_accessed

    def _fusion(self, fusion: Instruction, p: Properties) -> None:
        comp, root = fused_body(fusion)
        written = []
        tuple_shapes = fusion.shape.tuple_shapes
        leaf_shapes = list(tuple_shapes) if tuple_shapes is not None else [fusion.shape]
        zero_util: set[int] = set()
        is_tuple = tuple_shapes is not None
        # the root tuple's values, one per output (a fused root that does not give the fusion's outputs,
        # which XLA's verifier rejects, is costed by the outputs the fusion declares)
        values = (
            root.operands if is_tuple and root.opcode == "tuple" and len(root.operands) == len(leaf_shapes) else None
        )
        size = self._bytes
        for k, s in enumerate(leaf_shapes):
            value = values[k] if values is not None else root
            if s.tuple_shapes is not None:
                written.append(float(sum(size(x) for x in leaves(s))))
            elif value.opcode == "dynamic-update-slice" and (is_tuple or value is root):
                written.append(float(size(value.operands[1].shape)))
                zero_util.add(id(value))
            else:
                written.append(float(size(s)))
        p.output_bytes_per_leaf = written
        p.output_bytes = float(sum(written))
        p.bytes_accessed = p.output_bytes
        # the generic analysis uses every fused value once (1.0); the GPU one propagates its uses
        gpu = self.options.gpu
        if gpu:
            # one walk: the utilizations, the flops they weigh, the transcendentals of each instruction
            gpu_flops, transcendental_column = self._gpu_utilizations(comp, zero_util)
            reads = None
            constants = [i for i in comp.instructions if i.opcode == "constant" and elements(i.shape) > 1]
        else:
            scan = self._scan(comp)
            reads, constants = scan.reads, scan.constants
        if gpu:
            # the flops weighed by the utilizations: of the plain sums only the transcendentals are read
            p.flops, p.transcendentals = gpu_flops, self._fused_transcendentals(comp, transcendental_column)
        else:
            sums = self._sub.get(id(comp))
            if sums is None:
                exact = scan.flop_sums
                if None in exact:
                    ordered = list(map(self._flop_figures, shared_visit_order(comp)))
                    flops, transcendentals = _rounded_in_order(exact, ordered, 2)
                else:
                    flops, transcendentals = cast("list[float]", exact)
                sums = self._sub[id(comp)] = (flops, transcendentals)
            p.flops, p.transcendentals = sums
        utilization = self.utilization
        cap = not self.options.count_multiple_input_accesses
        for instr in constants:
            u = utilization.get(id(instr), 1.0) if gpu else 1.0
            p.bytes_accessed += self._bytes(instr.shape) * (min(u, 1.0) if cap else u)
        params = comp.parameters
        accessed = p.bytes_accessed
        operands = len(fusion.operands)
        if reads is not None:
            found = list(map(params.get, range(operands)))
            if None not in found and not any(
                map(operator.is_not, map(_TUPLE_SHAPES, map(_SHAPE, found)), repeat(None))
            ):
                # the generic analysis with every parameter an array (most fusions): the bytes read
                # of each from the scan, added in order as below, every utilization 1.0
                read_bytes = list(map(float, map(reads.get, map(id, found), repeat(0))))
                p.operand_bytes, p.operand_utilization = read_bytes, [1.0] * operands
                p.bytes_accessed = reduce(operator.add, read_bytes, accessed)
                return
        operand_bytes: list[float] = []
        operand_utilization: list[float] = []
        for k in range(operands):
            param = params.get(k)
            if param is None:
                operand_bytes.append(0.0)
                operand_utilization.append(0.0)
                accessed += 0.0
                continue
            if reads is not None and param.shape.tuple_shapes is None:
                read = float(reads.get(id(param), 0))
            else:
                read = float(self._parameter_read_bytes(param))
            operand_bytes.append(read)
            operand_utilization.append(utilization.get(id(param), 0.0) if gpu else 1.0)
            accessed += read
        p.operand_bytes, p.operand_utilization, p.bytes_accessed = operand_bytes, operand_utilization, accessed

    def _fused_transcendentals(self, comp, column: list[float]) -> float:
        """The transcendentals of ``_sub_cost(comp)`` from ``column`` (those of the instructions that
        may have any), the float32 sum as XLA sums it."""
        total = exact_float32_sum(column) if column else 0.0
        if total is None:
            ordered = [(self._flop_figures(instr)[1],) for instr in shared_visit_order(comp)]
            return _rounded_in_order([None], ordered, 1)[0]
        return total

    def _gpu_utilizations(self, comp, zero_util: set) -> tuple[float, list[float]]:
        """Propagate utilization from the root (1.0) to the parameters; returns the fusion's
        flops (each instruction's flops times its utilization; float32 as in XLA, ``f32``) and
        the transcendentals of the instructions that may have any (in post-order from the root,
        reversed).

        Each value's roots: those it reaches through elementwise uses alone (a set of ids, added
        to in XLA's order: its utilization is their float32 sum in the set's order); each root's
        utilization: the float32 sum of what its users read of it."""
        order = post_order(comp)
        order.reverse()
        roots: dict[int, set] = {id(i): set() for i in order}
        root_util: dict[int, float] = dict.fromkeys(roots, 0.0)
        root = comp.root
        root_util[id(root)] = 1.0
        roots[id(root)].add(id(root))
        utilization = self.utilization
        of, flop_figures = self.of, self._flop_figures
        counts = self._element_counts
        terms: list[float] = []  # the weighed flops, summed at the end (exactly where no sum rounds)
        transcendentals: list[float] = []
        for instr in order:
            key = id(instr)
            mine = roots[key]
            if len(mine) == 1:
                # one root: f32(0.0 + x) is x, every figure here being a float32 already
                u = root_util[next(iter(mine))] + 0.0
            else:
                u = 0.0
                for r in mine:
                    u = f32(u + root_util[r])
            utilization[key] = u
            operands = instr.operands
            # an elementwise op (or one without operands) needs only its flops, which the opcode
            # and shape decide: its figures are not built
            op = instr.opcode
            if op in PASS_THROUGH or not operands:
                props = None
                instr_flops, instr_transcendentals = flop_figures(instr)
            else:
                props = of(instr)
                instr_flops, instr_transcendentals = props.flops, props.transcendentals
            if op not in FLOP_FREE:
                transcendentals.append(instr_transcendentals)
            if instr_flops or not math.isfinite(u):  # else it adds a zero
                # u x a float32 is that float32 where u is 1.0 (most instructions)
                if u == 1.0 and instr_flops.is_integer() and 0.0 <= instr_flops <= _EXACT_IN_FLOAT32:
                    weighed = instr_flops  # ``f32`` keeps it as it is
                else:
                    weighed = f32(instr_flops) if u == 1.0 else f32(u * f32(instr_flops))
                terms.append(weighed)
            if props is None:
                for operand in operands:
                    roots[id(operand)] |= mine
                continue
            by_operand = props.operand_utilization
            for k, operand in enumerate(operands):
                okey = id(operand)
                roots[okey].add(okey)
                if not u:
                    continue  # it would add 0.0 to the operand's root utilization
                if k == 0 and key in zero_util:
                    ou = 0.0
                else:
                    ou = by_operand[k]
                    ou = 1.0 if ou == 1.0 else f32(float(ou))
                shape = operand.shape
                n = counts.get(id(shape))
                if n is None or n[0] is not shape:
                    n = counts[id(shape)] = (shape, elements_recursive(shape))
                n = n[1]
                if n == 0:
                    cur = 0.0
                elif u == 1.0 and ou == 1.0 and n <= _EXACT_IN_FLOAT32:
                    cur = 1.0  # every element used once: each step below is exact
                else:
                    cur = f32(math.ceil(f32(f32(u * ou) * f32(float(n)))) / n)
                total = root_util[okey] + cur
                # ``f32``'s own shortcut, without the call: a whole float32 within 2**24 stays as it is
                exact = total.is_integer() and -_EXACT_IN_FLOAT32 <= total <= _EXACT_IN_FLOAT32
                root_util[okey] = total if exact else f32(total)
        if self._fusion_key is None:  # the what-if reads them; a cost sharing fusions serves no what-if
            self._roots.update(roots)
            self._root_util.update(root_util)
        flops = exact_float32_sum(terms) if terms else 0.0
        if flops is None:  # some partial sum rounds: added in order, as XLA adds them
            flops = 0.0
            for weighed in terms:
                flops = f32(flops + weighed)
        return flops, transcendentals

    def _parameter_read_bytes(self, param: Instruction) -> int:
        if param.shape.is_tuple:
            if not self.options.gpu:
                return self._generic_tuple_read_bytes(param)
            return sum(
                self._parameter_read_bytes(g) for g in _users(param, self._users) if g.opcode == "get-tuple-element"
            )
        if self.options.gpu:
            u = f32(float(self.utilization.get(id(param), 0.0)))
            if not self.options.count_multiple_input_accesses:
                u = min(u, 1.0)
            size = float(self._bytes(param.shape))
            if u == 1.0 and size.is_integer() and size <= _EXACT_IN_FLOAT32:
                return int(size)  # each ``f32`` below keeps a whole float32 as it is
            return int(f32(f32(size) * u))
        return self._generic_parameter_read_bytes(param)

    def _generic_tuple_read_bytes(self, param: Instruction) -> int:
        """What the generic analysis reads of a tuple-shaped fused parameter: per array leaf, what
        the element taken for it reads, found by following get-tuple-elements down the leaf's
        index; where no get-tuple-element takes an index, the search goes on from the value
        reached so far, and a leaf that reaches no element of its own counts what that value
        reads (XLA's ``HandleFusion``; a tuple read whole costs its table of pointers)."""
        total = 0
        for index in _leaf_indices(param.shape):
            value = param
            for i in index:
                for user in _users(value, self._users):
                    if user.opcode == "get-tuple-element" and user.attr("index") == i:
                        value = user
                        break
            total += self._generic_parameter_read_bytes(value)
        return total

    def _generic_parameter_read_bytes(self, value: Instruction) -> int:
        """Bytes the generic analysis reads of a parameter (or an element taken of one)."""
        comp = value.computation
        return self._generic_reads(comp).get(id(value), 0) if comp is not None else 0

    def _generic_reads(self, comp: Computation) -> dict[int, int]:
        """``_scan(comp).reads``, once per computation."""
        hit = self._reads.get(id(comp))
        if hit is not None and hit[0] is comp:
            return hit[1]
        return self._scan(comp).reads

    def _nested_fusion_read_bytes(self, nested: Instruction, k: int) -> int:
        """What the generic analysis reads of a value through operand ``k`` of a fusion nested in
        a fused computation (XLA's ``FusionParameterReadBytes``, its fusion case): where that
        parameter is the nested root's first operand (or the root has none), a slice or
        dynamic-slice of the nested fusion's result reads what it takes; otherwise each of the
        nested fusion's users reads what the nested parameter reads, once for all of them. A
        nested fusion no instruction uses (the root of its computation) reads nothing."""
        body, root = fused_body(nested)
        param = body.parameters.get(k)
        if param is None:
            return 0
        simple = not root.operands or root.operands[0] is param
        size = self._bytes
        comp = nested.computation
        users = [i for i in comp.instructions if nested in i.operands] if comp is not None else []
        n = 0
        seen = False  # a user that reads the whole nested parameter was counted
        for user in users:
            op = user.opcode
            if simple and op == "slice":
                n += size(user.shape)
            elif simple and op == "dynamic-slice":
                if user.operands[0] is nested:
                    n += size(user.shape)
                elif not seen:
                    seen = True
                    n += size(nested.shape)
            elif simple and op == "dynamic-update-slice":
                if user.operands[0] is not nested and not seen:
                    seen = True
                    n += size(nested.shape)
            elif not seen:
                seen = True
                n += self._generic_parameter_read_bytes(param)
        return n

    def _scan(self, comp: Computation) -> FusedScan:
        """What a fusion's figures read of its computation, in one pass over it.

        ``flop_sums``: the exact float32 sums of the (flops, transcendentals) of its instructions
        (``exact_float32_sums``; None where a sum rounds); an elementwise op's figures follow from
        its opcode and shape, so each distinct pair of those is costed once and counted.

        ``reads``: id(value) -> bytes the generic analysis reads, for the parameters and the
        elements taken of them: a slice or dynamic-slice of it reads its result's size, a
        broadcast or reshape the whole value, a fusion what its own parameter reads; any other
        use (a dynamic-update-slice only as an index or update) reads the whole value, once
        however many there are. Each use counts per operand position: every rule gives the
        same for a user that reads the value twice as for one that reads it once."""
        # one loop in Python, each instruction's opcode tested as few times as its kind needs:
        # CPython runs it in a fraction of what a pass over the instructions per question costs
        elementwise: dict[str, dict[int, list]] = {}  # opcode -> id(result shape) -> [shape, count]
        others: list[Instruction] = []  # flops that read more than the opcode and the shape
        constants: list[Instruction] = []
        partial_users: list[Instruction] = []
        whole: set[Instruction] = set()  # instructions hash by identity
        for instr in comp.instructions:
            op = instr.opcode
            if op in _COUNTED:
                by_shape = elementwise.get(op)
                if by_shape is None:
                    by_shape = elementwise[op] = {}
                shape = instr.shape
                seen = by_shape.get(id(shape))
                if seen is None:
                    by_shape[id(shape)] = [shape, 1]
                else:
                    seen[1] += 1
            elif op in _PARTIAL_READERS:
                if op == "fusion":
                    others.append(instr)
                partial_users.append(instr)
                continue
            elif op == _CONSTANT:
                if elements(instr.shape) > 1:
                    constants.append(instr)
                continue
            elif op not in FLOP_FREE:  # nor elementwise: its flops read more than its shape
                others.append(instr)
            for o in instr.operands:
                if o.opcode in READ_VALUES:
                    whole.add(o)
        rows: list[tuple] = []
        counts: list[int] = []
        memo = self._elementwise_flops  # ``_flop_figures``' memo
        for op, by_shape in elementwise.items():
            for shape_id, (shape, n) in by_shape.items():
                hit = memo.get((op, shape_id))
                if hit is None:  # the entry keeps the shape alive, so the id stays its
                    hit = memo[(op, shape_id)] = (shape, elementwise_flops(op, shape, self.options))
                rows.append(hit[1])
                counts.append(n)
        if others:
            rows.extend(map(self._flop_figures, others))
            counts.extend(repeat(1, len(others)))
        sized: dict[int, int] = {}
        size = self._bytes
        for user in partial_users:
            operands = user.operands
            op = user.opcode
            for k, o in enumerate(operands):
                if o.opcode not in READ_VALUES:
                    continue
                key = id(o)
                if op == "fusion":
                    n = self._nested_fusion_read_bytes(user, k)
                elif op == "slice" or (op == "dynamic-slice" and k == 0):
                    n = size(user.shape)
                elif op in ("broadcast", "reshape"):
                    n = size(o.shape)
                else:  # a dynamic-slice's or dynamic-update-slice's index or update
                    if operands[0] is not o:
                        whole.add(o)
                    n = 0
                sized[key] = sized.get(key, 0) + n
        if whole:
            values_read = list(whole)
            read = dict(zip(map(id, values_read), shape_bytes_of(list(map(_SHAPE, values_read)))))
            if sized:
                for key in read.keys() & sized.keys():
                    read[key] += sized[key]
                sized.update(read)
            else:
                sized = read
        self._reads[id(comp)] = (comp, sized)  # the entry keeps ``comp`` alive: ids stay unique
        return FusedScan(exact_counted_float32_sums(rows, counts, 2), constants, sized)


_CONSTANT = "constant"
_CONTEXT_BYTES = 4.0  # the u32[] context a send or recv gives beside its data
# The opcodes whose flops follow from the opcode and the result shape (``_scan`` counts them by both)
_COUNTED = COSTED_ELEMENTWISE - FLOP_FREE
# Ops whose flops are not ``instruction_flops``' (``_compute`` sums what they call instead)
_CALLERS = frozenset({"fusion", "call", "async-start", "while", "conditional"})
# Users that read less than the whole of a value, or read it as something else does (``_scan``)
_PARTIAL_READERS = frozenset({"fusion", "slice", "dynamic-slice", "dynamic-update-slice", "broadcast", "reshape"})


_FLOAT32 = struct.Struct("<f")
_EXACT_IN_FLOAT32 = float(1 << 24)  # every integer up to this magnitude is a float32


def f32(x: float) -> float:
    """``x`` rounded to the nearest float32 (ties to even), as ``numpy.float32(x)`` gives it; inf
    beyond float32's range. On float32 operands, a sum, product or quotient computed in double
    and rounded here is the float32 operation's result (double's 53 bits are at least 2 x 24 + 2,
    so the double rounding is innocuous)."""
    if x.is_integer() and -_EXACT_IN_FLOAT32 <= x <= _EXACT_IN_FLOAT32:
        return x
    try:
        return _FLOAT32.unpack(_FLOAT32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def exact_float32_sums(rows: list[tuple], width: int) -> list[float | None]:
    """Per column, its float32 sum in any order where no partial sum rounds, else None.

    Every value a non-negative integer, a multiple of 2**k (k: the fewest trailing zero bits
    among them), with the total below 2**(24 + k): every partial sum is then a multiple of 2**k
    no larger than the total, an integer of at most 24 significant bits that float32 holds
    exactly, so adding in XLA's order or any other gives the same figure."""
    if not rows:
        return [0.0] * width
    return [exact_float32_sum(column) for column in zip(*rows)]


def exact_float32_sum(column: Sequence[float], counts: Sequence[int] | None = None) -> float | None:
    """``exact_float32_sums`` of one column (not empty); ``counts``: how many times each value is
    added (once each without it)."""
    if counts is None and _surely_rounds(column):
        return None
    try:
        whole = list(map(int, column))  # Python ints: exact at any size
    except (ValueError, OverflowError):  # nan, inf
        return None
    total = sum(whole) if counts is None else sum(map(operator.mul, whole, counts))
    # the lowest set bit of them all: their gcd's (one call in C, where or-ing them is one per value)
    bits = math.gcd(*whole)
    low = (bits & -bits).bit_length() - 1
    if total > 0 and bits and total >> low >= 1 << 24:
        return None  # some sum rounds (or, with a fraction or a negative value among them, is None anyway)
    if whole != list(column) or min(whole) < 0:
        return None
    if total == 0:
        # float32 keeps the sign of a sum of zeros that are all -0.0
        return 0.0 if any(math.copysign(1.0, v) > 0 for v in column) else None
    return float(total) if total >> low < 1 << 24 else None


def _surely_rounds(column: Sequence[float]) -> bool:
    """Whether ``exact_float32_sum(column)`` is None for a reason found without converting every
    value: the total (the double sum, within a relative 2**-20 of it for any column of fewer than
    2**30 values) reaches 2**24 times the lowest set bit of its largest or its smallest nonzero
    value, bounds on the lowest set bit of them all (a big module's byte sums: most columns)."""
    largest = max(column)
    if type(largest) is not float or not (0.0 < largest < _LARGE) or not largest.is_integer():
        return False  # the whole check decides (zeros, fractions, nan, inf, negative figures)
    smallest = min(filter(None, column))
    if type(smallest) is not float or not (smallest > 0.0) or not smallest.is_integer():
        return False
    low = min(_lowest_bit(largest), _lowest_bit(smallest))
    return sum(column) * (1.0 - 2.0**-20) >= float(low << 24)


def _lowest_bit(whole: float) -> int:
    n = int(whole)
    return n & -n


_LARGE = float(2**1000)


def exact_counted_float32_sums(rows: list[tuple], counts: list[int], width: int) -> list[float | None]:
    """``exact_float32_sums`` of a list holding each of ``rows`` as many times as ``counts`` says."""
    if not rows:
        return [0.0] * width
    return [exact_float32_sum(column, counts) for column in zip(*rows)]


def _nothing(instr, p) -> None:
    return None


def _custom_gather_or_scatter(fusion: Instruction) -> Instruction | None:
    """The op XLA's ``HandleFusion`` costs a custom fusion (kind kCustom, as TPU dumps write their
    gathers and scatters) as: the first gather or scatter of its fused computation, in the order
    written. The fusion's figures are that op's alone (its operand numbers taken as the fusion's);
    None for any other fusion."""
    if fusion.attrs.get("kind") != "kCustom":
        return None
    comp = fusion.fused_computation
    if comp is None:
        return None
    return next((i for i in comp.instructions if i.opcode in {"gather", "scatter"}), None)


def _leaf_indices(shape, prefix: tuple[int, ...] = ()) -> Iterator[tuple[int, ...]]:
    """The index of every array leaf of ``shape``, depth first."""
    if shape.tuple_shapes is None:
        yield prefix
        return
    for k, element in enumerate(shape.tuple_shapes):
        yield from _leaf_indices(element, (*prefix, k))


def fused_body(fusion: Instruction) -> tuple[Computation, Instruction]:
    """A fusion's computation and its root (a parsed fusion has both)."""
    comp = fusion.fused_computation
    assert comp is not None and comp.root is not None, fusion.name
    return comp, comp.root


# The values whose users the generic analysis reads: parameters and the elements taken of them.
READ_VALUES = frozenset(("parameter", "get-tuple-element"))


def _users(value: Instruction, memo: dict) -> list[Instruction]:
    """The users of ``value`` (a parameter or a get-tuple-element) in its computation, each once,
    in text order; ``memo``: id(computation) -> (computation, its table of those values' users),
    built once per computation (the entry keeps the computation alive)."""
    comp = value.computation
    if comp is None:
        return []
    hit = memo.get(id(comp))
    if hit is None or hit[0] is not comp:
        users: dict[int, list[Instruction]] = {}
        wanted = {id(i) for i in comp.instructions if i.opcode in READ_VALUES}
        for instr in comp.instructions:
            for o in instr.operands:
                if id(o) in wanted:
                    seen = users.get(id(o))
                    if seen is None:
                        users[id(o)] = [instr]
                    elif seen[-1] is not instr:  # an operand used twice by one user: one use
                        seen.append(instr)
        hit = memo[id(comp)] = (comp, users)
    return hit[1].get(id(value), [])


def post_order(comp) -> list[Instruction]:
    """Operands before users, from the root, then anything the root does not reach."""
    root, instructions = comp.root, comp.instructions
    if root is not None:
        order = _depth_first([root], _OPERANDS)
        if len(order) == len(instructions):  # the root reaches every instruction (most computations)
            return order
    return _depth_first(([root] if root is not None else []) + list(instructions), _OPERANDS)


def visit_order(comp) -> list[Instruction]:
    """XLA's ``HloComputation::Accept`` order: the roots nothing uses (other than the root), each
    in post-order, then the root's post-order; operands in order, control predecessors after them."""
    instructions = comp.instructions
    used: set[Instruction] = set(chain.from_iterable(map(_OPERANDS, instructions)))  # hashed by identity
    control = list(filter(None, map(_CONTROL, instructions)))
    used.update(chain.from_iterable(control))
    starts = [i for i in instructions if i not in used and i is not comp.root]
    if comp.root is not None:
        starts.append(comp.root)
    # without control edges (most computations) an instruction's predecessors are its operands
    if not control:
        return _depth_first(starts, _OPERANDS)
    # else each instruction's predecessors looked up in a table (no call into Python per instruction)
    predecessors = dict(zip(instructions, map(_OPERANDS, instructions)))
    for instr in compress(instructions, map(_CONTROL, instructions)):
        predecessors[instr] = (*instr.operands, *instr.control_predecessors)
    return _depth_first(starts, predecessors.__getitem__)


# Per analysis context: id(computation) -> (computation, its ``visit_order``); the GPU and the
# generic costs of a module sum the same computations.
_VISIT_ORDERS = register_table("analyses.cost.hlo_cost.visit_orders")


def shared_visit_order(comp) -> list[Instruction]:
    """``visit_order(comp)``, made once per computation in the analysis context."""
    table = current().tables[_VISIT_ORDERS]
    hit = table.get(id(comp))
    if hit is None or hit[0] is not comp:
        hit = table[id(comp)] = (comp, visit_order(comp))  # the entry keeps ``comp`` alive: ids stay its
    return hit[1]


def _depth_first(starts, predecessors) -> list[Instruction]:
    """Post-order from each of ``starts`` in turn: ``predecessors(instr)`` in order before
    ``instr``, each instruction once (iterative: deep graphs). One without predecessors (a
    parameter, a constant) is emitted as soon as it is reached, without a turn on the stack."""
    seen: set[Instruction] = set()  # instructions hash by identity
    mark = seen.add
    out: list[Instruction] = []
    done = out.append
    stack: list[tuple] = []
    push, pop = stack.append, stack.pop
    for start in starts:
        if start in seen:
            continue
        mark(start)
        push((start, iter(predecessors(start))))
        while stack:
            instr, pending = stack[-1]
            for o in pending:
                if o not in seen:
                    mark(o)
                    before = predecessors(o)
                    if before:
                        push((o, iter(before)))
                        break
                    done(o)
            else:
                pop()
                done(instr)
    return out


_OPERANDS, _OPCODE, _SHAPE = attrgetter("operands"), attrgetter("opcode"), attrgetter("shape")
_TUPLE_SHAPES = attrgetter("tuple_shapes")  # None for an array
_CONTROL = attrgetter("control_predecessors")


def transpose_is_bitcast(instr: Instruction) -> bool:
    """XLA's ``ShapeUtil::TransposeIsBitcast``: the permutation carries the output's layout onto
    the operand's, dimension for dimension. Dimensions of size 1 count like the others: a transpose
    that moves one is costed as a copy, though its bytes stay in place."""
    from ..emitters import physical_order

    operand = instr.operands[0].shape
    perm = instr.attrs.get("dimensions") or ()
    if len(perm) != instr.shape.rank:
        return False
    return [perm[d] for d in physical_order(instr.shape)] == list(physical_order(operand))


def collective_ranks(instr: Instruction) -> int:
    groups = instr.attrs.get("replica_groups_typed") or ()
    if groups:
        return max(len(g) for g in groups)
    module = instr.computation.module if instr.computation is not None else None
    attrs = module.attrs if module is not None else {}
    for key in ("num_partitions", "replica_count"):
        try:
            n = int(str(attrs.get(key, "1")))
        except ValueError:
            n = 1
        if n > 1:
            return n
    return 1


_ROUNDED_IN_PYTHON = 1 << 17  # figures at most that ``_rounded_in_order`` adds in Python (numpy past them)


def _rounded_in_order(exact: list[float | None], ordered: list[tuple], width: int) -> list[float]:
    """``exact``'s sums, each None replaced by the float32 sum of that column of ``ordered`` (the
    rows in XLA's visiting order): the rounding is part of XLA's figure (``add.accumulate`` adds
    one after the other, in float32, as the loop XLA runs)."""
    columns = [k for k, s in enumerate(exact) if s is None]
    if ordered and len(ordered) * len(columns) <= _ROUNDED_IN_PYTHON:
        # no numpy import: a float32 array's item rounds what is stored in it as numpy's cast does
        # (overflow to inf included), and a float32 sum of float32 values is their double sum rounded
        sums = list(exact)
        total, value = array("f", [0.0]), array("f", [0.0])
        by_column = list(zip(*ordered))
        for k in columns:
            column = by_column[k]
            total[0] = column[0]  # from the first, as ``accumulate`` does
            i = 1
            # adding a zero changes only a -0.0 total (to 0.0): zeros are skipped once it is not one
            while i < len(column) and total[0] == 0.0 and math.copysign(1.0, total[0]) < 0:
                value[0] = column[i]
                total[0] = total[0] + value[0]
                i += 1
            # each value made a float32 at once, as storing it in ``value`` would
            for x in array("f", filter(None, islice(column, i, None))):
                total[0] += x
            sums[k] = total[0]
        return sums  # type: ignore[return-value]
    import numpy as np

    # each figure made a float32 as ``numpy.array`` would, without its walk over nested sequences
    values = np.fromiter(chain.from_iterable(ordered), dtype=np.float32, count=len(ordered) * width)
    rounded = np.add.accumulate(values.reshape(-1, width), axis=0)[-1]
    return [float(rounded[k]) if s is None else s for k, s in enumerate(exact)]


_ZERO_ROWS: dict[int, tuple] = {1: ZERO_ROW}


def zero_row(costs: int) -> tuple:
    """The one row ``figure_rows`` gives every all-zero instruction under ``costs`` costs (the
    sums leave it out by identity; ``ZERO_ROW`` for one, what ``_all_figures`` gives)."""
    hit = _ZERO_ROWS.get(costs)
    if hit is None:
        hit = _ZERO_ROWS[costs] = ZERO_ROW * costs
    return hit


def figure_rows(costs: Sequence[HloCost]) -> Callable[[Instruction], tuple]:
    """``instr`` -> its figures under every one of ``costs`` in one row, as the sums read them: an
    all-zero instruction's row is one shared object (the sums leave it out by identity), and where
    the costs share a fusion key, fusions equal in structure share one row."""
    if len(costs) == 1:
        return costs[0]._all_figures  # ZERO_ROW for every all-zero instruction
    zeros = zero_row(len(costs))
    if len(costs) == 2:
        first, second = costs[0]._all_figures, costs[1]._all_figures
        key_of = costs[0]._fusion_key
        if key_of is not None and costs[1]._fusion_key is key_of:
            by_key: dict = {}

            def both(instr: Instruction) -> tuple:
                if instr.opcode in ALL_ZERO:
                    return zeros
                if instr.opcode != "fusion":
                    return first(instr) + second(instr)
                key = key_of(instr)
                row = by_key.get(key) if key is not None else None
                if row is None:
                    row = first(instr) + second(instr)
                    if key is not None:
                        by_key[key] = row
                return row

            return both
        return lambda instr: zeros if instr.opcode in ALL_ZERO else first(instr) + second(instr)
    figures = [c._all_figures for c in costs]
    return lambda instr: zeros if instr.opcode in ALL_ZERO else tuple(x for f in figures for x in f(instr))


def computation_totals_under(
    costs: Sequence[HloCost],
    comp,
    rows_of: Callable[[Instruction], tuple] | None = None,
    known: dict[int, tuple] | None = None,
) -> list[Properties]:
    """``cost.computation_totals(comp)`` for each of ``costs``, from one walk over the computation
    (a GPU module's report sums it under both variants): each instruction's figures under every
    cost in one row, read in XLA's visiting order, which the float32 sums need unless they are
    exact (large modules' byte sums are not). ``rows_of``: ``figure_rows(costs)``, where the
    caller keeps one; ``known``: id(instruction) -> (the instruction, its row), rows already
    made (by another process that analysed those instructions)."""
    order = shared_visit_order(comp)
    row_of = rows_of or figure_rows(costs)
    zeros = zero_row(len(costs))
    if known:
        get = known.get

        def known_or_made(instr: Instruction) -> tuple:
            hit = get(id(instr))
            return hit[1] if hit is not None and hit[0] is instr else row_of(instr)

        rows = list(map(known_or_made, order))
    else:
        rows = list(map(row_of, order))
    width = 4 * len(costs)
    # the all-zero rows (most of an entry: parameters, their elements, bitcasts) add nothing to an
    # exact sum; a column they would decide (zeros of both signs) is summed in order below
    exact = exact_float32_sums([row for row in rows if row is not zeros], width)
    sums: list[float] = _rounded_in_order(exact, rows, width) if None in exact else exact  # type: ignore[assignment]
    out = []
    for k, cost in enumerate(costs):
        flops, transcendentals, bytes_accessed, output_bytes = sums[4 * k : 4 * k + 4]
        totals = cost._totals.get(id(comp))
        if totals is None:
            totals = cost._totals[id(comp)] = Properties(
                flops=flops, transcendentals=transcendentals, bytes_accessed=bytes_accessed, output_bytes=output_bytes
            )
        out.append(totals)
    return out


def module_totals(module, options: CostOptions = DEFAULT_OPTIONS, cost: HloCost | None = None) -> Properties:
    """The module's figures as XLA sums them: every instruction of the entry computation (called
    computations through their callers)."""
    cost = cost or HloCost(options)
    return cost.computation_totals(module.entry)
