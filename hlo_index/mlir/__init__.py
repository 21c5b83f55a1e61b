"""MLIR input for ``bubble``: IREE's and MLIR's extract_slice / expand_shape / collapse_shape pairs,
decided by the same indexing-map engine as HLO slice / reshape pairs."""

from .analyse import MlirChain, analyse_mlir_text, analyse_parsed
from .parse import MlirError, looks_like_mlir, parse_mlir

__all__ = ["MlirChain", "MlirError", "analyse_mlir_text", "analyse_parsed", "looks_like_mlir", "parse_mlir"]
