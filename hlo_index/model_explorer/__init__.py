"""A Model Explorer extension that opens HLO text: ``model-explorer FILE --extensions=hlo_index.model_explorer``.

Model Explorer imports ``hlo_index.model_explorer.main`` and takes the adapter classes *defined
in that module*; the adapter lives there and nothing here imports it, so importing this package
(or hlo-index) never registers it early. Needs the optional extra: ``pip install 'hlo-index[model-explorer]'``.
"""
