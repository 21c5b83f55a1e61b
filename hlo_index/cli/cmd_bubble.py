"""``hlo-index bubble PATH...``: can each slice/reshape pair be swapped without changing the result?"""
from __future__ import annotations

import json
import os
import re
import sys

import click
from rich.text import Text

VERDICT_STYLE = {"legal": "green", "illegal": "red", "conditional": "cyan", "unprovable": "yellow"}
SCHEMA = "hlo-index/1"


@click.command("bubble")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Readable text, or JSON data on stdout.")
@click.option("--input", "input_kind", type=click.Choice(["auto", "hlo", "mlir"]), default="auto",
              show_default=True, help="Input language; auto: MLIR for *.mlir files and for text that "
                                      "is MLIR (func.func / util.func), HLO otherwise.")
@click.option("--write-rewrites", "rewrite_dir", type=click.Path(file_okay=False), default=None,
              help="Also write each legal HLO chain's whole rewritten module to DIR "
                   "(<module>.<chain>.hlo); the JSON names the file.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
def command(paths: tuple[str, ...], output_format: str, input_kind: str, rewrite_dir: str | None,
            color: str) -> None:
    """Find every reshape(slice(x)) and slice(reshape(x)) pair and decide from the indexing maps
    whether the other order computes the same tensor.

    HLO: slice, dynamic-slice, reshape and reshape-like bitcast. MLIR: tensor.extract_slice with
    tensor.expand_shape / collapse_shape, in func.func or IREE's util.func, static or dynamic.

    Verdicts: legal (with the swapped pair: the instructions that replace it), illegal (with the
    reason and a counterexample), conditional (MLIR: legal exactly when the printed condition on
    the function's values holds) or unprovable.
    """
    from ..analyses.reorder import analyse_module
    from ..hlo import format_diagnostic
    from ..hlo.diagnostics import ParseError
    from ..hlo.loader import hlo_files_in, parse_checked, read_text
    from ..mlir import MlirError, analyse_mlir_text, looks_like_mlir

    modules, failed = [], False
    files = []
    for path in paths:
        if path != "-" and os.path.isdir(path):
            files.extend(sorted(set(hlo_files_in(path)) | set(_mlir_files_in(path))))
        else:
            files.append(path)
    for path in files:
        display = "<stdin>" if path == "-" else path
        try:
            text = read_text(path)
        except ParseError as e:
            click.echo(format_diagnostic(e.diagnostic), err=True)
            failed = True
            continue
        is_mlir = input_kind == "mlir" or (input_kind == "auto" and (
            path.endswith(".mlir") or looks_like_mlir(text)))
        if is_mlir:
            try:
                modules.append(("mlir", display, analyse_mlir_text(text, display)))
            except MlirError as e:
                click.echo(format_diagnostic(e.diagnostic), err=True)
                failed = True
            continue
        for result in parse_checked(text, display):
            if result.module is None:
                failed = True
                # path:line:col, the source line and a caret; unwrapped so editors can jump to it
                for d in result.diagnostics[:1] or ():
                    click.echo(format_diagnostic(d), err=True)
                if not result.diagnostics:
                    click.echo(f"{display}: error: could not be read", err=True)
                continue
            modules.append(("hlo", result.module.name, analyse_module(result.module)))
    if output_format == "json":
        data = {"schema": SCHEMA, "modules": [
            {"name": name, "input": kind, "chains": [_chain_json(kind, name, c, rewrite_dir) for c in chains]}
            for kind, name, chains in modules]}
        click.echo(json.dumps(data, indent=1))
    else:
        from .cmd_analyze import make_console
        _print_text(modules, rewrite_dir, make_console(color))
    if failed:
        sys.exit(2)


def _mlir_files_in(directory: str) -> list[str]:
    return [os.path.join(root, name) for root, _, names in os.walk(directory) for name in names
            if name.endswith(".mlir")]


def _chain_json(kind: str, module: str, chain, rewrite_dir: str | None) -> dict:
    if kind == "mlir":
        return chain.to_json()
    return chain.to_json(_write_module(module, chain, rewrite_dir))


def _write_module(module: str, chain, rewrite_dir: str | None) -> str | None:
    if rewrite_dir is None or chain.rewrite_parts is None:
        return None
    os.makedirs(rewrite_dir, exist_ok=True)
    safe = lambda s: re.sub(r"[^A-Za-z0-9_.-]", "_", s)   # noqa: E731
    path = os.path.join(rewrite_dir, f"{safe(module)}.{safe(chain.computation)}.{safe(chain.reshape)}.hlo")
    with open(path, "w") as f:
        f.write(chain.rewrite_module)
    return path


def _print_text(modules, rewrite_dir, out) -> None:
    for kind, name, chains in modules:
        out.print(Text(f"{'function file' if kind == 'mlir' else 'module'} {name}: "
                       f"{len(chains)} slice/reshape pair(s)", style="bold"))
        for c in chains:
            line = Text("  ")
            line.append(c.verdict, style=VERDICT_STYLE.get(c.verdict, ""))
            pair = (f"%{c.slice} -> %{c.reshape}" if c.order == "slice_then_reshape"
                    else f"%{c.reshape} -> %{c.slice}")
            where = f"@{c.computation}" if kind == "mlir" else f"%{c.computation}"
            order = c.direction if kind == "mlir" else c.order
            line.append(f"  {pair}  ({order.replace('_', ' ')}, in {where})")
            out.print(line, soft_wrap=True)
            out.print(Text(f"      {c.reason}"), soft_wrap=True)
            if getattr(c, "condition", None):
                out.print(Text(f"      condition: {c.condition}"), soft_wrap=True)
            if c.rewrite:
                out.print(Text("      rewrite:\n" + "\n".join("        " + s for s in c.rewrite.splitlines())),
                          soft_wrap=True)
            if kind == "hlo":
                path = _write_module(name, c, rewrite_dir)
                if path:
                    out.print(Text(f"      rewritten module: {path}"), soft_wrap=True)
