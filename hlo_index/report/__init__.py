"""What each command reports, as plain dataclasses built from the analyses.

``model`` holds the report objects of ``analyze`` and ``check``, ``build`` makes them from a
module, ``driver`` runs that over files (and worker processes); ``operand_figures``,
``finding_kinds`` and ``source`` add the figures ``build.TARGET_FIGURES`` lists; ``check``,
``triage``, ``tile``, ``layout``, ``bubble`` and ``stats`` build the other commands' reports.
Submodules are imported on use, so a command pays only for what it reports.
"""
