"""jaxlib's LAPACK kernels as XLA FFI custom calls on the CPU client (what JAX calls on CPU).

jaxlib ships typed-FFI handlers (``lapack_sgetrf_ffi``, ``lapack_dsyevd_ffi``, ...) in
``jaxlib.cpu._lapack``; JAX registers them with the CPU client's custom-call registry at
import and its lowering rules emit ``stablehlo.custom_call`` ops naming them. This module
does both for fcore: ``target`` registers the handlers (once) and names one, and
``custom_call`` writes the op with JAX's operand/result layouts (column-major matrices),
``mhlo.backend_config`` attributes and output-operand aliases, so fcore runs the same
kernels on the same data layout and gets JAX's numbers bit for bit.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np
from jaxlib import xla_client as xc
import jaxlib.cpu._lapack as _lapack

from fcore.backend import runtime
from fcore.backend.lowering import LoweringRuleContext, tensor_type
from fcore.ir.avals import ShapedArray
from fcore.ir.dtypes import DType

__all__ = ["target", "custom_call", "supports"]

_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
           np.dtype(np.complex128): "z"}
_registered = False
_lock = threading.Lock()


def _register() -> None:
    """Register every typed-FFI LAPACK handler jaxlib has with the CPU client (once)."""
    global _registered
    with _lock:
        if _registered:
            return
        _lapack.initialize()
        for name, capsule in _lapack.registrations().items():
            if name.endswith("_ffi"):
                xc.register_custom_call_target(name, capsule, platform="cpu", api_version=1)
        _registered = True


def supports(dtype: DType) -> bool:
    """Whether LAPACK has kernels for ``dtype`` (float32/64, complex64/128)."""
    return np.dtype(dtype) in _PREFIX


def target(fn_base: str, dtype: DType) -> str:
    """The registered FFI target for ``fn_base`` (``"getrf_ffi"``) at ``dtype``: ``lapack_sgetrf_ffi``."""
    _register()
    try:
        return f"lapack_{_PREFIX[np.dtype(dtype)]}{fn_base}"
    except KeyError:
        raise NotImplementedError(f"LAPACK has no {fn_base} kernel for dtype {np.dtype(dtype).name}") from None


def _layout(rank: int, column_major: bool) -> str:
    """JAX's layouts: batches of column-major matrices for the operands of the largest rank,
    row-major (default) for the others (pivots, taus, eigenvalues, infos)."""
    dims = (rank - 2, rank - 1, *range(rank - 3, -1, -1)) if column_major else tuple(range(rank - 1, -1, -1))
    return f"dense<[{', '.join(map(str, dims))}]> : tensor<{rank}xindex>" if rank else "dense<> : tensor<0xindex>"


def custom_call(
    ctx: LoweringRuleContext,
    name: str,
    operands: Sequence[str],
    avals_in: Sequence[ShapedArray],
    avals_out: Sequence[ShapedArray],
    config: Mapping[str, int | str] = {},
    aliases: Mapping[int, int] = {},
) -> list[str]:
    """Emit ``stablehlo.custom_call @name`` (typed FFI); returns the result names.

    ``config`` holds the kernel's attributes: ``ui8`` characters (``uplo``, ``mode``, ...) as ints,
    others as typed attribute text (``"1 : i32"``); ``aliases`` maps
    a result index to the operand whose buffer it reuses (LAPACK works in place).
    """
    if runtime.platform() != "cpu":  # (XLA would fail to compile with "No FFI handler registered")
        raise NotImplementedError(
            f"{name} is a LAPACK kernel, which XLA runs on CPU only: fcore has no {runtime.platform()} lowering of "
            "this linear-algebra operation yet (JAX calls cuSOLVER there)"
        )
    max_rank = max(len(a.shape) for a in avals_in)
    in_layouts = ", ".join(_layout(len(a.shape), len(a.shape) == max_rank) for a in avals_in)
    out_layouts = ", ".join(_layout(len(a.shape), len(a.shape) == max_rank) for a in avals_out)
    cfg = ", ".join(f"{k} = {v if isinstance(v, str) else f'{v} : ui8'}" for k, v in sorted(config.items()))
    alias_text = ", ".join(
        f"#stablehlo.output_operand_alias<output_tuple_indices = {[r] if len(avals_out) > 1 else []}, "
        f"operand_index = {o}, operand_tuple_indices = []>"
        for r, o in sorted(aliases.items())
    )
    ins = ", ".join(tensor_type(a) for a in avals_in)
    outs = ", ".join(tensor_type(a) for a in avals_out)
    num_batch = max_rank - 2
    res = ctx.emit(
        f"stablehlo.custom_call @{name}({', '.join(operands)}) {{backend_config = \"\", "
        f"mhlo.backend_config = {{{cfg}}}, mhlo.frontend_attributes = {{num_batch_dims = \"{num_batch}\"}}, "
        f"operand_layouts = [{in_layouts}], output_operand_aliases = [{alias_text}], result_layouts = [{out_layouts}]}} "
        f": ({ins}) -> {outs if len(avals_out) == 1 else '(' + outs + ')'}",
        n_results=len(avals_out),
    )
    return [res] if len(avals_out) == 1 else [f"{res}#{i}" for i in range(len(avals_out))]
