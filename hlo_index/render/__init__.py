"""Text, JSON and SVG from a report (``hlo_index.report``); nothing is computed here.

Submodules are imported on use so the CLI does not pay for Rich when printing JSON.
"""
