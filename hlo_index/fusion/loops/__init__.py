"""A ``while`` loop's maps over all its iterations, per tuple element of the loop state.

``matrix``: the composition (general, or unrolled iteration by iteration); ``trip_count``: how
many iterations run; ``counter``: the body specialised to one iteration's counter values;
``joins``: the rows such an unrolled loop reads, joined into one map per progression.
"""
