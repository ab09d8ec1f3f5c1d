"""One lexicon: the names people type and the labels they read. `language_of` is the one language detector;
`lexicon()` loads knowledge/lexicon.yaml (clouds covered and not, methods, objectives, billing, engines, dtypes,
question types) once; GPU and model names come from the catalog's aliases (service.catalog.queries)."""

from service.lexicon.data import Lexicon, label, lexicon
from service.lexicon.language import language_of

__all__ = ["Lexicon", "label", "language_of", "lexicon"]
