"""Checks on an answer's text before it leaves: no English prose in a Chinese answer (`english.py`), and the
answer invariants (`invariants.py`: the load figure, dtypes, price on request, dominated picks, the document's
reasons). They read what the engine and the renderers produced, never the user's message."""
