"""lsa_lib: the library behind the executable book *The Geometry of Lightning Self-Attention*.

One module per chapter:

* :mod:`lsa_lib.lightning` — the lightning map (chapter 1);
* :mod:`lsa_lib.rank` — certified exact and honest float ranks (used by every later chapter).
"""

from ._core import check_architecture, parameter_count, random_layers
from .lightning import (
    attention_matrix,
    attention_scores,
    deep_attention,
    lightning_attention,
    softmax_attention,
)

__version__ = "0.1.0"

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
