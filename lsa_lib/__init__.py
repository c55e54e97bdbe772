"""lsa_lib: the library behind the executable book *The Geometry of Lightning Self-Attention*.

One module per idea, each pointing to the chapter that explains it; the API pages of the book
list them. The most used functions are re-exported here.
"""

from .lightning import (
    attention_layer,
    attention_matrix,
    attention_scores,
    deep_attention,
    parameter_count,
    random_layers,
)

__version__ = "0.1.0"

__all__ = [
    "attention_layer",
    "attention_matrix",
    "attention_scores",
    "deep_attention",
    "parameter_count",
    "random_layers",
]
