"""Windows of an operand placed at starts read from an indices operand: gather reads them into its
output, scatter writes its updates through them (XLA's dimension numbers are the same, renamed).

The *windowed* array is gather's output or scatter's updates. Its batch dims pick an index vector
(and, for batching dims, the operand's batch coordinate too); its offset dims are the position in
the window. The operand dims that the window spans with size 1 and the windowed array drops are
gather's collapsed slice dims, scatter's inserted window dims. An out-of-range window is clamped
into the operand by gather and skipped by scatter (``Starts.clamped`` / ``Starts.skipped``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..affine import Expr, Interval, const, dim
from ..hlo.model import Instruction
from .rules_reduce import RangeVars
from .starts import Starts, in_range, known_start


def batch_position(indices_dim: int, index_vector_dim: int) -> int:
    """Position among the indices' batch dims (its dims other than the index vector dim)."""
    return indices_dim if indices_dim < index_vector_dim else indices_dim - 1


@dataclass(frozen=True)
class WindowPlacement:
    """Where the windows of a gather or scatter lie in its operand, read from its dimension numbers."""

    operand_dims: tuple[int, ...]
    windowed_dims: tuple[int, ...]
    indices: Instruction
    index_vector_dim: int
    start_dims: tuple[int, ...]  # the operand dim each index-vector component starts
    operand_batching_dims: tuple[int, ...]
    indices_batching_dims: tuple[int, ...]
    collapsed_dims: tuple[int, ...]
    offset_dims: tuple[int, ...]  # windowed dims holding the position in the window
    window_size: tuple[int, ...]  # per operand dim
    clamps: bool  # gather clamps an out-of-range window; scatter skips it

    @classmethod
    def of_gather(cls, instr: Instruction) -> WindowPlacement:
        return cls(
            tuple(instr.operands[0].shape.dims),
            tuple(instr.shape.dims),
            instr.operands[1],
            instr.attr("index_vector_dim"),
            tuple(instr.attr("start_index_map", ())),
            tuple(instr.attr("operand_batching_dims", ())),
            tuple(instr.attr("start_indices_batching_dims", ())),
            tuple(instr.attr("collapsed_slice_dims", ())),
            tuple(instr.attr("offset_dims", ())),
            tuple(instr.attr("slice_sizes")),
            clamps=True,
        )

    @classmethod
    def of_scatter(cls, instr: Instruction) -> WindowPlacement:
        count = (len(instr.operands) - 1) // 2
        operand_dims = tuple(instr.operands[0].shape.dims)
        update_dims = tuple(instr.operands[count + 1].shape.dims)
        offset_dims = tuple(instr.attr("update_window_dims", ()))
        inserted = tuple(instr.attr("inserted_window_dims", ()))
        batching = tuple(instr.attr("input_batching_dims", ()))
        window_size = [1] * len(operand_dims)
        for d, u in zip(cls._spanned(operand_dims, inserted, batching), offset_dims):
            window_size[d] = update_dims[u]
        return cls(
            operand_dims,
            update_dims,
            instr.operands[count],
            instr.attr("index_vector_dim"),
            tuple(instr.attr("scatter_dims_to_operand_dims", ())),
            batching,
            tuple(instr.attr("scatter_indices_batching_dims", ())),
            inserted,
            offset_dims,
            tuple(window_size),
            clamps=False,
        )

    @staticmethod
    def _spanned(operand_dims: Sequence[int], collapsed: Iterable[int], batching: Iterable[int]) -> list[int]:
        skipped = set(collapsed) | set(batching)
        return [d for d in range(len(operand_dims)) if d not in skipped]

    @property
    def window_dims(self) -> list[int]:
        """The operand dims the window spans, in the order of ``offset_dims``."""
        return self._spanned(self.operand_dims, self.collapsed_dims, self.operand_batching_dims)

    @property
    def batch_dims(self) -> list[int]:
        """The windowed dims that pick the index vector, in the indices' batch order."""
        return [d for d in range(len(self.windowed_dims)) if d not in self.offset_dims]

    def starts(self, batch_exprs: Sequence[Expr], starts: Starts) -> list[Expr]:
        """The window's start in every operand dim (0 for dims without one), given the expressions
        of the indices' batch coordinates."""
        ivd, name = self.index_vector_dim, self.indices.name
        result: list[Expr] = [const(0)] * len(self.operand_dims)
        for k, d in enumerate(self.start_dims):
            max_start = self.operand_dims[d] - self.window_size[d]
            known = known_start(self.indices, ivd, k, batch_exprs)
            if self.clamps:
                result[d] = starts.clamped(
                    known,
                    max_start,
                    f"%{name}[..., {k}] at the batch position (start of operand dim {d}, clamped to [0, {max_start}])",
                )
            else:
                result[d] = starts.skipped(
                    known,
                    max_start,
                    f"%{name}[..., {k}] at the update's batch position "
                    f"(start of operand dim {d}; windows starting outside "
                    f"[0, {max_start}] are skipped)",
                )
        for d, j in zip(self.operand_batching_dims, self.indices_batching_dims):
            result[d] = batch_exprs[batch_position(j, ivd)]
        return result

    def windowed_to_operand(self, starts: Starts) -> list[Expr]:
        """Windowed element (its dims as ``d<k>``) -> the operand element it is: start plus offset."""
        results = self.starts([dim(d) for d in self.batch_dims], starts)
        for d, out_dim in zip(self.window_dims, self.offset_dims):
            results[d] = results[d] + dim(out_dim)
        return results

    def operand_batch_exprs(self, ranges: RangeVars) -> list[Expr]:
        """The indices' batch coordinates seen from an operand element: a batching dim's own
        coordinate, any other a range variable over the batch dim."""
        ivd = self.index_vector_dim
        tied = {batch_position(j, ivd): d for d, j in zip(self.operand_batching_dims, self.indices_batching_dims)}
        return [
            dim(tied[pos]) if pos in tied else ranges.new_or_zero(self.windowed_dims[w])
            for pos, w in enumerate(self.batch_dims)
        ]

    def operand_to_windowed(
        self, batch_exprs: Sequence[Expr], starts: Starts
    ) -> tuple[list[Expr], list[tuple[Expr, Interval]]]:
        """Operand element (its dims as ``d<k>``) -> the windowed elements placed on it: results
        and constraints (the element lies in the window, on the collapsed dims at its start)."""
        start = self.starts(batch_exprs, starts)
        results: list[Expr] = [const(0)] * len(self.windowed_dims)
        constraints = list(starts.constraints)
        for pos, out_dim in enumerate(self.batch_dims):
            results[out_dim] = batch_exprs[pos]
        for d, out_dim in zip(self.window_dims, self.offset_dims):
            results[out_dim] = dim(d) - start[d]
            constraints.append(in_range(results[out_dim], self.window_size[d]))
        constraints.extend(in_range(dim(d) - start[d], 1) for d in self.collapsed_dims)
        return results, constraints
