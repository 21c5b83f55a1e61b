"""Rendering of analysis reports: Rich text panels (``text``) and the JSON document (``report``).

Submodules are imported on use so the CLI does not pay for Rich when printing JSON.
"""
