"""``fcore.extend.mlir`` as ``jax.extend.mlir``: jaxlib's MLIR Python bindings under a public path,
for lowering rules that build ops with them (``fcore.interpreters.mlir.register_lowering``):
``from fcore.extend.mlir import ir`` and ``from fcore.extend.mlir.dialects import stablehlo as hlo``.

The modules are jaxlib's own (``fcore.backend.mlir_api`` imports them; only the backend imports
jaxlib); each is also importable by its dotted path here (``import fcore.extend.mlir.ir``).
"""

from __future__ import annotations

import sys

from fcore.backend.mlir_api import ir as ir, passmanager as passmanager
from fcore.extend.mlir import dialects as dialects

sys.modules[f"{__name__}.ir"] = ir
sys.modules[f"{__name__}.passmanager"] = passmanager
