"""``hlo-index bubble PATH...``: can each slice/reshape pair be swapped without changing the result?"""

from __future__ import annotations

import json
import os
import sys

import click

from .options import color_option, format_option


@click.command("bubble")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@format_option(help="Readable text, or JSON data on stdout.")
@click.option(
    "--input",
    "input_kind",
    type=click.Choice(["auto", "hlo", "mlir"]),
    default="auto",
    show_default=True,
    help="Input language; auto: MLIR for *.mlir files and for text that "
    "is MLIR (func.func / util.func), HLO otherwise.",
)
@click.option(
    "--write-rewrites",
    "rewrite_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Also write each legal HLO chain's whole rewritten module to DIR "
    "(<module>.<chain>.hlo); the JSON names the file.",
)
@color_option
def command(paths: tuple[str, ...], fmt: str, input_kind: str, rewrite_dir: str | None, color: str) -> None:
    """Find every reshape(slice(x)) and slice(reshape(x)) pair and decide from the indexing maps
    whether the other order computes the same tensor.

    HLO: slice, dynamic-slice, reshape and reshape-like bitcast. MLIR: tensor.extract_slice with
    tensor.expand_shape / collapse_shape, in func.func or IREE's util.func, static or dynamic.

    Verdicts: legal (with the swapped pair: the instructions that replace it), illegal (with the
    reason and a counterexample), conditional (MLIR: legal exactly when the printed condition on
    the function's values holds) or unprovable.
    """
    from ..report.bubble import bubble_report

    report = bubble_report(paths, input_kind)
    for message in report.diagnostics:
        click.echo(message, err=True)  # unwrapped, so editors can jump to path:line:col
    rewrites = _write_rewrites(report, rewrite_dir) if rewrite_dir is not None else {}
    if fmt == "json":
        from ..render.bubble import bubble_json

        click.echo(json.dumps(bubble_json(report, rewrites), indent=1))
    else:
        from ..render.bubble import render_bubble_text
        from .cmd_analyze import make_console

        render_bubble_text(report, rewrites, make_console(color))
    if report.failed:
        sys.exit(2)


def _write_rewrites(report, rewrite_dir: str) -> dict[int, str]:
    """Each legal HLO chain's rewritten module, written under ``rewrite_dir``: {id(chain): path}."""
    from ..report.bubble import rewrite_path

    written: dict[int, str] = {}
    for m in report.modules:
        if m.kind != "hlo":
            continue
        for chain in m.chains:
            path = rewrite_path(m.name, chain, rewrite_dir)
            if path is None:
                continue
            # two files with one module name (before / after optimizations) must not overwrite
            # each other's rewrite
            stem, taken = path[: -len(".hlo")], 1
            while path in written.values():
                taken += 1
                path = f"{stem}.{taken}.hlo"
            os.makedirs(rewrite_dir, exist_ok=True)
            with open(path, "w") as f:
                f.write(chain.rewrite_module)
            written[id(chain)] = path
    return written
