"""Products of ``fcore.numpy``: ``dot``, ``matmul`` (``@``), ``tensordot``, ``einsum``...

As in ``jnp``, operands keep their dtypes into ``lax.dot_general``, which is asked for the
promoted dtype as its ``preferred_element_type``; the result is then given the promoted
``(dtype, weak_type)`` (so two weakly typed operands give a weakly typed product).
"""

from __future__ import annotations

import operator
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from fcore import lax
from fcore.interpreters.array import Array
from fcore.ir import dtypes
from fcore.ir.dtypes import DType
from fcore.lax._base import ArrayLike
from fcore.numpy._dtypes import canonical_dtype
from fcore.numpy._promotion import asarray, broadcast_to, convert, normalize_axis

Dims = tuple[int, ...]


def _preferred(a: Array, b: Array, preferred_element_type: Any) -> tuple[DType, bool]:
    if preferred_element_type is None:
        return dtypes.result_type((a.dtype, a.weak_type), (b.dtype, b.weak_type))
    return canonical_dtype(preferred_element_type), False


def _laid_out(out: Array, out_sharding: Any) -> Array:
    """The result laid out as ``out_sharding`` asks (a sharding, or a ``PartitionSpec`` of the set
    mesh); fcore's mesh axes are all ``Auto``, so this is a sharding constraint."""
    if out_sharding is None:
        return out
    laid: Array = lax.with_sharding_constraint(out, out_sharding)
    return laid


def dot(
    a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None, out_sharding: Any = None
) -> Array:
    """``jnp.dot``: scalar products, matrix products, and sum over the last axis of ``a``
    and the second-to-last of ``b`` for higher ranks (batch dimensions are stacked)."""
    return _laid_out(_dot(a, b, precision, preferred_element_type), out_sharding)


def _dot(a: ArrayLike, b: ArrayLike, precision: Any, preferred_element_type: Any) -> Array:
    x, y = asarray(a, "dot", 0), asarray(b, "dot", 1)
    dt, weak = _preferred(x, y, preferred_element_type)
    xn, yn = x.ndim, y.ndim
    if xn == 0 or yn == 0:
        contract: tuple[Dims, Dims] = ((), ())
    elif yn == 1:
        contract = ((xn - 1,), (0,))
    else:
        contract = ((xn - 1,), (yn - 2,))
    out = lax.dot_general(x, y, (contract, ((), ())), precision=precision, preferred_element_type=dt)
    return convert(out, dt, weak)


def matmul(
    a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None, out_sharding: Any = None
) -> Array:
    """``a @ b`` with NumPy's rules: 1-D operands are promoted and squeezed back, leading
    (batch) dimensions broadcast."""
    return _laid_out(_matmul(a, b, precision, preferred_element_type), out_sharding)


def _matmul(a: ArrayLike, b: ArrayLike, precision: Any, preferred_element_type: Any) -> Array:
    x, y = asarray(a, "matmul", 0), asarray(b, "matmul", 1)
    for i, v in enumerate((x, y)):
        if v.ndim < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has ndim {v.ndim}")
    dt, weak = _preferred(x, y, preferred_element_type)
    a_is_mat, b_is_mat = x.ndim > 1, y.ndim > 1
    a_batch: list[int | None] = list(x.shape[:-2]) if a_is_mat else []
    b_batch: list[int | None] = list(y.shape[:-2]) if b_is_mat else []
    nb = max(len(a_batch), len(b_batch))
    pad_a: list[int | None] = [None] * (nb - len(a_batch))
    pad_b: list[int | None] = [None] * (nb - len(b_batch))
    a_batch = pad_a + a_batch
    b_batch = pad_b + b_batch
    a_squeeze: list[int] = []
    b_squeeze: list[int] = []
    both_squeeze: list[int] = []
    a_bdims: list[int] = []
    b_bdims: list[int] = []
    idx_batch: list[int] = []
    idx_a_other: list[int] = []
    idx_b_other: list[int] = []
    for i, (ba, bb) in enumerate(zip(a_batch, b_batch)):
        if ba is None:
            idx_b_other.append(i)
        elif bb is None:
            idx_a_other.append(i)
        elif ba == 1 and bb == 1:
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
            both_squeeze.append(i)
        elif ba == 1:
            idx_b_other.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
        elif bb == 1:
            idx_a_other.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
        elif ba == bb:
            a_bdims.append(len(idx_batch) + len(idx_a_other))
            b_bdims.append(len(idx_batch) + len(idx_b_other))
            idx_batch.append(i)
        else:
            raise ValueError(f"Incompatible shapes for matmul arguments: {x.shape} and {y.shape}")
    if a_is_mat:
        idx_a_other.append(nb)
    if b_is_mat:
        idx_b_other.append(nb + a_is_mat)
    perm = tuple(int(p) for p in np.argsort(np.array(idx_batch + idx_a_other + idx_b_other, dtype=np.int64)))
    if a_squeeze:
        x = lax.squeeze(x, tuple(a_squeeze))
    if b_squeeze:
        y = lax.squeeze(y, tuple(b_squeeze))
    out = lax.dot_general(
        x,
        y,
        (((x.ndim - 1,), (y.ndim - 1 - b_is_mat,)), (tuple(a_bdims), tuple(b_bdims))),
        precision=precision,
        preferred_element_type=dt,
    )
    if perm != tuple(range(len(perm))):
        out = lax.transpose(out, perm)
    if both_squeeze:
        out = lax.expand_dims(out, tuple(both_squeeze))
    return convert(out, dt, weak)


def vdot(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """Dot product of the flattened arrays, conjugating the first."""
    from fcore.numpy.ufuncs_parts import conjugate

    x, y = asarray(a, "vdot", 0), asarray(b, "vdot", 1)
    if dtypes.is_complex(x.dtype):
        x = conjugate(x)
    return dot(lax.reshape(x, (x.size,)), lax.reshape(y, (y.size,)), precision=precision, preferred_element_type=preferred_element_type)


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """Conjugate dot product along ``axis`` (batch dimensions broadcast)."""
    from fcore.numpy.ufuncs_parts import conjugate
    from fcore.numpy.shape_ops import moveaxis

    x, y = asarray(x1, "vecdot", 0), asarray(x2, "vecdot", 1)
    if dtypes.is_complex(x.dtype):
        x = conjugate(x)
    x = moveaxis(x, axis, -1)
    y = moveaxis(y, axis, -1)
    return matmul(lax.expand_dims(x, (x.ndim - 1,)), lax.expand_dims(y, (y.ndim,)), precision=precision, preferred_element_type=preferred_element_type)[..., 0, 0]


def inner(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """Sum product over the last axes of ``a`` and ``b``."""
    x, y = asarray(a, "inner", 0), asarray(b, "inner", 1)
    if x.ndim == 0 or y.ndim == 0:
        return dot(x, y, precision=precision, preferred_element_type=preferred_element_type)
    return tensordot(x, y, (-1, -1), precision=precision, preferred_element_type=preferred_element_type)


def outer(a: ArrayLike, b: ArrayLike, out: None = None) -> Array:
    """``ravel(a)[:, None] * ravel(b)[None, :]``."""
    from fcore.numpy.ufuncs_binary import multiply

    if out is not None:
        raise NotImplementedError("The 'out' argument to fnp.outer is not supported.")
    x, y = asarray(a, "outer", 0), asarray(b, "outer", 1)
    xf = lax.reshape(x, (x.size, 1))
    yf = lax.reshape(y, (1, y.size))
    return multiply(xf, yf)


def tensordot(
    a: ArrayLike, b: ArrayLike, axes: int | Sequence[Any] = 2, *, precision: Any = None, preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Array:
    """Sum products over the given axes (the last ``axes`` of ``a`` and first of ``b``)."""
    return _laid_out(_tensordot(a, b, axes, precision, preferred_element_type), out_sharding)


def _tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence[Any], precision: Any, preferred_element_type: Any) -> Array:
    x, y = asarray(a, "tensordot", 0), asarray(b, "tensordot", 1)
    dt, weak = _preferred(x, y, preferred_element_type)
    xn, yn = x.ndim, y.ndim
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if n > min(xn, yn) or n < 0:
            raise TypeError(f"Number of tensordot axes (axes {n}) exceeds input ranks ({x.shape} and {y.shape})")
        contract: tuple[Dims, Dims] = (tuple(range(xn - n, xn)), tuple(range(n)))
    elif len(axes) == 2:
        ax, bx = axes
        if isinstance(ax, (int, np.integer)) and isinstance(bx, (int, np.integer)):
            contract = ((normalize_axis(ax, xn),), (normalize_axis(bx, yn),))
        else:
            la, lb = list(ax), list(bx)
            if len(la) != len(lb):
                raise TypeError(f"tensordot requires axes lists to have equal length, got {ax} and {bx}.")
            contract = (tuple(normalize_axis(i, xn) for i in la), tuple(normalize_axis(i, yn) for i in lb))
    else:
        raise TypeError(f"tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples; got {axes}")
    out = lax.dot_general(x, y, (contract, ((), ())), precision=precision, preferred_element_type=dt)
    return convert(out, dt, weak)


def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """Kronecker product (``lax.mul`` after promotion, so bools are rejected as in jnp)."""
    from fcore.numpy._promotion import result_of

    dt, weak = result_of(a, b, name="kron")
    x, y = convert(a, dt, weak), convert(b, dt, weak)
    nd = max(x.ndim, y.ndim)
    x = lax.reshape(x, (1,) * (nd - x.ndim) + x.shape) if x.ndim < nd else x
    y = lax.reshape(y, (1,) * (nd - y.ndim) + y.shape) if y.ndim < nd else y
    xe = lax.reshape(x, tuple(s for d in x.shape for s in (d, 1)))
    ye = lax.reshape(y, tuple(s for d in y.shape for s in (1, d)))
    full = tuple(s for p, q in zip(x.shape, y.shape) for s in (p, q))
    prod = lax.mul(broadcast_to(xe, full), broadcast_to(ye, full))
    return lax.reshape(prod, tuple(p * q for p, q in zip(x.shape, y.shape)))


# -- einsum -----------------------------------------------------------------------------
def _parse_einsum(subscripts: str, ndims: Sequence[int]) -> tuple[list[str], str]:
    """Input and output letter strings, with ellipses expanded to fresh letters."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
        explicit = True
    else:
        lhs, out, explicit = subscripts, "", False
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        raise ValueError(f"einsum: {len(ins)} operand subscripts but {len(ndims)} operands")
    used = set(subscripts) - {".", ",", "-", ">"}
    for ch in used:
        if ch not in string.ascii_letters:
            raise ValueError(f"einsum: invalid subscript character {ch!r}")
    fresh = [c for c in string.ascii_letters if c not in used]
    max_ell = 0
    for spec, nd in zip(ins, ndims):
        if "..." in spec:
            max_ell = max(max_ell, nd - (len(spec) - 3))
    if max_ell > len(fresh):
        raise ValueError("einsum: too many dimensions")
    ell = "".join(fresh[:max_ell])
    new_ins = []
    for spec, nd in zip(ins, ndims):
        if "..." in spec:
            k = nd - (len(spec) - 3)
            if k < 0:
                raise ValueError(f"einsum: operand has {nd} dimensions, fewer than its subscripts {spec!r}")
            spec = spec.replace("...", ell[max_ell - k:] if k else "")
        if len(spec) != nd:
            raise ValueError(f"einsum: subscripts {spec!r} do not match an operand with {nd} dimensions")
        new_ins.append(spec)
    if explicit:
        out = out.replace("...", ell)
    else:
        counts: dict[str, int] = {}
        for spec in new_ins:
            for c in spec:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    if len(set(out)) != len(out):
        raise ValueError(f"einsum: output subscript {out!r} has repeated letters")
    for c in out:
        if not any(c in s for s in new_ins):
            raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs")
    return new_ins, out


def _sum_axes(x: Array, axes: Sequence[int]) -> Array:
    if not axes:
        return x
    if dtypes.is_bool(x.dtype):
        return lax.reduce_or(x, tuple(axes))
    return lax.reduce_sum(x, tuple(axes))


def _take_diagonal(x: Array, spec: str) -> tuple[Array, str]:
    """Collapse repeated letters of one operand (``"ii" -> "i"``) to their diagonal."""
    while True:
        dup = next((c for c in spec if spec.count(c) > 1), None)
        if dup is None:
            return x, spec
        i = spec.index(dup)
        j = spec.index(dup, i + 1)
        n = x.shape[i]
        mask = lax.eq(
            lax.broadcasted_iota(dtypes.int32, x.shape, i), lax.broadcasted_iota(dtypes.int32, x.shape, j)
        )
        zero = convert(0, x.dtype, x.weak_type)
        picked = lax.select_n(mask, lax.broadcast_in_dim(zero, x.shape, ()), x)
        x = _sum_axes(picked, (j,))
        spec = spec[:j] + spec[j + 1:]
        assert x.shape[i] == n


def einsum(
    subscripts: str, /, *operands: ArrayLike, optimize: Any = None, precision: Any = None,
    preferred_element_type: Any = None, out_sharding: Any = None,
) -> Array:
    """Einstein summation (``jnp.einsum``) for string subscripts, with explicit or implicit
    output and ellipses; operands are contracted pairwise, left to right, with
    ``lax.dot_general`` (summed-out letters use ``lax.reduce_sum``)."""
    return _laid_out(_einsum(subscripts, operands, precision, preferred_element_type), out_sharding)


def _einsum(subscripts: str, operands: tuple[ArrayLike, ...], precision: Any, preferred_element_type: Any) -> Array:
    if not isinstance(subscripts, str):
        raise NotImplementedError("fnp.einsum supports string subscripts only")
    xs = [asarray(o, "einsum", i) for i, o in enumerate(operands)]
    if not xs:
        raise ValueError("einsum needs at least one operand")
    if preferred_element_type is None:
        dt, weak = dtypes.result_type(*((x.dtype, x.weak_type) for x in xs))
    else:
        dt, weak = canonical_dtype(preferred_element_type), False
    ins, out = _parse_einsum(subscripts, [x.ndim for x in xs])
    # Sizes per letter; size-1 dimensions broadcast against the others.
    sizes: dict[str, int] = {}
    for x, spec in zip(xs, ins):
        for c, d in zip(spec, x.shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
            elif d not in (1, sizes[c]):
                raise ValueError(f"einsum: size of label {c!r} is {d} for one operand and {sizes[c]} for another")
    items: list[tuple[Array, str]] = []
    for x, spec in zip(xs, ins):
        x, spec = _take_diagonal(x, spec)
        target = tuple(sizes[c] for c in spec)
        if x.shape != target:
            x = broadcast_to(x, target)
        items.append((x, spec))

    def needed_later(k: int) -> set[str]:
        s = set(out)
        for _, sp in items[k:]:
            s |= set(sp)
        return s

    # Sum out letters private to one operand.
    x0, s0 = items[0]
    keep = needed_later(1)
    drop = [i for i, c in enumerate(s0) if c not in keep]
    x0 = _sum_axes(x0, drop)
    s0 = "".join(c for c in s0 if c in keep)
    for k in range(1, len(items)):
        x1, s1 = items[k]
        keep = needed_later(k + 1)
        drop1 = [i for i, c in enumerate(s1) if c not in keep and c not in s0]
        x1 = _sum_axes(x1, drop1)
        s1 = "".join(c for i, c in enumerate(s1) if i not in drop1)
        common = [c for c in s0 if c in s1]
        batch = [c for c in common if c in keep]
        contract = [c for c in common if c not in keep]
        dn = (
            (tuple(s0.index(c) for c in contract), tuple(s1.index(c) for c in contract)),
            (tuple(s0.index(c) for c in batch), tuple(s1.index(c) for c in batch)),
        )
        x0 = lax.dot_general(x0, x1, dn, precision=precision, preferred_element_type=dt)
        s0 = "".join(batch) + "".join(c for c in s0 if c not in common) + "".join(c for c in s1 if c not in common)
    # Final sum of letters not in the output, then permutation.
    drop = [i for i, c in enumerate(s0) if c not in out]
    x0 = _sum_axes(x0, drop)
    s0 = "".join(c for c in s0 if c in out)
    perm = tuple(s0.index(c) for c in out)
    if perm != tuple(range(len(perm))):
        x0 = lax.transpose(x0, perm)
    return convert(x0, dt, weak)


def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Batched matrix-vector products: ``x1[..., n, m] @ x2[..., m]`` with broadcast batch axes."""
    from fcore.numpy.vectorize import vectorize

    a, b = asarray(x1, "matvec"), asarray(x2, "matvec", 1)
    out: Array = vectorize(matmul, signature="(n,m),(m)->(n)")(a, b)
    return out


def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Batched vector-matrix products of the conjugated vector: ``conj(x1[..., n]) @ x2[..., n, m]``."""
    from fcore.numpy.ufuncs_parts import conjugate
    from fcore.numpy.vectorize import vectorize

    a, b = asarray(x1, "matvec"), asarray(x2, "matvec", 1)
    out: Array = vectorize(matmul, signature="(n),(n,m)->(m)")(conjugate(a), b)
    return out


def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Array:
    """The cross product of 3-vectors (2-vectors count as having a zero third component; two
    2-vectors give the scalar z component) along the given axes, broadcasting the others."""
    from fcore.numpy.creation import zeros_like
    from fcore.numpy.shape_ops import moveaxis, stack

    x, y = asarray(a, "cross"), asarray(b, "cross", 1)
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = moveaxis(x, axisa, -1), moveaxis(y, axisb, -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]
    a0, a1 = x[..., 0], x[..., 1]
    a2 = x[..., 2] if x.shape[-1] == 3 else zeros_like(a0)
    b0, b1 = y[..., 0], y[..., 1]
    b2 = y[..., 2] if y.shape[-1] == 3 else zeros_like(b0)
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return moveaxis(c, 0, axisc)


def einsum_path(subscripts: str, /, *operands: ArrayLike, optimize: bool | str | list[Any] = "auto") -> tuple[list[tuple[int, ...]], str]:
    """The pairwise contraction order an optimizer picks for ``einsum(subscripts, *operands)``,
    and a report of its cost, from the operands' shapes. NumPy's ``einsum_path`` computes it:
    ``"auto"`` is "optimal" for up to four operands and "greedy" beyond (opt_einsum's choice,
    which ``jnp`` uses), ``True`` is "optimal", ``False`` contracts left to right. ``jnp``'s
    report is an opt_einsum object; this one is NumPy's text."""
    if not isinstance(subscripts, str):
        raise NotImplementedError("fnp.einsum_path supports string subscripts only")
    if optimize is False:
        order: list[tuple[int, ...]] = [(0, 1)] * (len(operands) - 1) if len(operands) > 1 else [(0,)]
        return order, "unoptimized: operands contracted left to right"
    how: Any = optimize
    if optimize is True:
        how = "optimal"
    elif optimize == "auto":
        how = "optimal" if len(operands) <= 4 else "greedy"
    elif isinstance(optimize, list):
        how = ["einsum_path", *optimize]
    stand_ins = [np.broadcast_to(np.zeros((), np.float32), np.shape(o)) for o in operands]
    path, report = np.einsum_path(subscripts, *stand_ins, optimize=how)
    return [tuple(p) for p in path[1:]], str(report)
