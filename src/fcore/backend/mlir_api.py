"""jaxlib's MLIR Python bindings, the one place fcore imports them for users: ``fcore.extend.mlir``
re-exports these modules (as ``jax.extend.mlir`` does), so that lowering rules written JAX's way
(``hlo.AddOp(hlo.MulOp(x, y), z).result``) build ops with them (``fcore.backend.binding_lowering``)."""

from __future__ import annotations

from jaxlib.mlir import ir as ir
from jaxlib.mlir import passmanager as passmanager
from jaxlib.mlir.dialects import arith as arith
from jaxlib.mlir.dialects import builtin as builtin
from jaxlib.mlir.dialects import chlo as chlo
from jaxlib.mlir.dialects import func as func
from jaxlib.mlir.dialects import math as math
from jaxlib.mlir.dialects import memref as memref
from jaxlib.mlir.dialects import mpmd as mpmd
from jaxlib.mlir.dialects import scf as scf
from jaxlib.mlir.dialects import sdy as sdy
from jaxlib.mlir.dialects import sparse_tensor as sparse_tensor
from jaxlib.mlir.dialects import stablehlo as stablehlo
from jaxlib.mlir.dialects import vector as vector

#: The dialect modules ``jax.extend.mlir.dialects`` has (JAX 0.10), by name.
DIALECTS = {
    "arith": arith, "builtin": builtin, "chlo": chlo, "func": func, "math": math, "memref": memref, "mpmd": mpmd,
    "scf": scf, "sdy": sdy, "sparse_tensor": sparse_tensor, "stablehlo": stablehlo, "vector": vector,
}
