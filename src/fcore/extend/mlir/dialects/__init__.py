"""``fcore.extend.mlir.dialects`` as ``jax.extend.mlir.dialects``: jaxlib's dialect modules
(``stablehlo``, ``chlo``, ``func``, ...), each also importable by its dotted path here."""

from __future__ import annotations

import sys

from fcore.backend.mlir_api import (
    DIALECTS,
    arith as arith,
    builtin as builtin,
    chlo as chlo,
    func as func,
    math as math,
    memref as memref,
    mpmd as mpmd,
    scf as scf,
    sdy as sdy,
    sparse_tensor as sparse_tensor,
    stablehlo as stablehlo,
    vector as vector,
)

for _name, _module in DIALECTS.items():
    sys.modules[f"{__name__}.{_name}"] = _module
del _name, _module
