"""lsa_lib: the library behind the executable book *The Geometry of Lightning Self-Attention*.

One module per chapter, plus the rank engine and a small shared core:

* :mod:`lsa_lib.lightning` — the lightning map (chapter 1);
* :mod:`lsa_lib.fibers` — single-layer fibers (chapter 2);
* :mod:`lsa_lib.symmetries` — deep symmetries and virtual weights (chapter 3);
* :mod:`lsa_lib.dimension` — dimension formulas (chapter 4);
* :mod:`lsa_lib.singularities` — singularities and the boundary (chapter 5);
* :mod:`lsa_lib.softmax` — the softmax conjecture (chapter 6);
* :mod:`lsa_lib.variants` — beyond the paper (chapter 7);
* :mod:`lsa_lib.rank` — certified exact ranks and honest float ranks (chapters 2–7);
* :mod:`lsa_lib.plotting` — the book's figure style.

The most used functions are re-exported here; everything else is imported from its module,
e.g. ``from lsa_lib.rank import certified_dimension``.
"""

from importlib import metadata as _metadata

from ._core import check_architecture, parameter_count, random_layers
from .lightning import (
    attention_matrix,
    attention_scores,
    deep_attention,
    lightning_attention,
    softmax_attention,
)

# The one version source is [project].version in pyproject.toml, read back from the metadata.
try:
    __version__ = _metadata.version("lsa_lib")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "unknown"

__all__ = [
    "attention_matrix",
    "attention_scores",
    "check_architecture",
    "deep_attention",
    "lightning_attention",
    "parameter_count",
    "random_layers",
    "softmax_attention",
]
