"""lsa_lib: the library behind the executable book *The Geometry of Lightning Self-Attention*.

One module per idea, each pointing to the chapter that explains it; the API pages of the book
list them. The most used functions are re-exported here.
"""

from importlib import metadata as _metadata

from .lightning import (
    attention_layer,
    attention_matrix,
    attention_scores,
    deep_attention,
    parameter_count,
    random_layers,
)

# The one version source is [project].version in pyproject.toml, read back from the metadata.
try:
    __version__ = _metadata.version("lsa_lib")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "unknown"

__all__ = [
    "attention_layer",
    "attention_matrix",
    "attention_scores",
    "deep_attention",
    "parameter_count",
    "random_layers",
]
