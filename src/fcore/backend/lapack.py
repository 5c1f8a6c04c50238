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

__all__ = ["target", "custom_call", "on_gpu", "supports"]

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


#: On CUDA, the cuSOLVER kernel of jax's CUDA plugin that stands for a LAPACK routine (as JAX's
#: GPU lowerings pick them; same operands, results and column-major layouts).
_CUSOLVER = {"getrf_ffi": "cusolver_getrf_ffi", "geqrf_ffi": "cusolver_geqrf_ffi",
             "orgqr_ffi": "cusolver_orgqr_ffi", "ungqr_ffi": "cusolver_orgqr_ffi",
             "syevd_ffi": "cusolver_syevd_ffi", "heevd_ffi": "cusolver_syevd_ffi", "gesvdj_ffi": "cusolver_gesvdj_ffi"}
_cusolver_registered = False


def _register_cusolver() -> None:
    """Register the CUDA plugin's solver kernels with XLA (once; jax, imported in the same
    process, may have registered them already)."""
    global _cusolver_registered
    with _lock:
        if _cusolver_registered:
            return
        from jaxlib import gpu_solver

        for name, capsule, api_version in gpu_solver.registrations()["CUDA"]:
            try:
                xc.register_custom_call_target(name, capsule, platform="CUDA", api_version=api_version)
            except Exception:  # (registered before, by jax)
                pass
        _cusolver_registered = True


def on_gpu() -> bool:
    """Whether the kernels are cuSOLVER's (the CUDA client) rather than LAPACK's."""
    return runtime.platform() in ("cuda", "gpu")  # (the CUDA plugin's client names itself "gpu")


def supports(dtype: DType) -> bool:
    """Whether LAPACK has kernels for ``dtype`` (float32/64, complex64/128)."""
    return np.dtype(dtype) in _PREFIX


def target(fn_base: str, dtype: DType) -> str:
    """The registered FFI target for ``fn_base`` (``"getrf_ffi"``) at ``dtype``: ``lapack_sgetrf_ffi``."""
    if on_gpu():
        cusolver = _CUSOLVER.get(fn_base)
        if cusolver is None:
            raise NotImplementedError(
                f"LAPACK's {fn_base} runs on CPU only, and fcore has no CUDA lowering of this linear-algebra "
                "operation yet (JAX calls cuSOLVER there)"
            )
        _register_cusolver()
        return cusolver
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
    if name.startswith("lapack_") and runtime.platform() != "cpu":  # (XLA: "No FFI handler registered")
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
