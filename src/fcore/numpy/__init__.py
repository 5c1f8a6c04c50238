"""``fcore.numpy``: a NumPy-compatible array API built on ``fcore.lax`` (``jax.numpy``'s semantics).

Import as ``import fcore.numpy as fnp``. Dtype promotion, weak types and 64-bit/strict modes
follow ``jax.numpy`` exactly; every function works on concrete and traced arrays alike.
Importing this package installs the ``fcore.Array`` operators and methods.

Each public name is re-exported here exactly once, as ``from .module import name as name``;
the names JAX 0.10 has and fcore does not are listed, with the reason, in
``tests/test_numpy_namespace.py``.
"""

import numpy as _np

from fcore.interpreters.array import Array as _Array

from fcore.numpy._dtypes import (
    bool_ as bool_,
    int8 as int8,
    int16 as int16,
    int32 as int32,
    int64 as int64,
    uint8 as uint8,
    uint16 as uint16,
    uint32 as uint32,
    uint64 as uint64,
    bfloat16 as bfloat16,
    float16 as float16,
    float32 as float32,
    float64 as float64,
    complex64 as complex64,
    complex128 as complex128,
    int1 as int1,
    int2 as int2,
    int4 as int4,
    uint1 as uint1,
    uint2 as uint2,
    uint4 as uint4,
    float4_e2m1fn as float4_e2m1fn,
    float6_e2m3fn as float6_e2m3fn,
    float6_e3m2fn as float6_e3m2fn,
    float8_e3m4 as float8_e3m4,
    float8_e4m3 as float8_e4m3,
    float8_e4m3b11fnuz as float8_e4m3b11fnuz,
    float8_e4m3fn as float8_e4m3fn,
    float8_e4m3fnuz as float8_e4m3fnuz,
    float8_e5m2 as float8_e5m2,
    float8_e5m2fnuz as float8_e5m2fnuz,
    float8_e8m0fnu as float8_e8m0fnu,
    dtype as dtype,
    finfo as finfo,
    iinfo as iinfo,
    issubdtype as issubdtype,
    isdtype as isdtype,
    can_cast as can_cast,
    promote_types as promote_types,
    result_type as result_type,
    generic as generic,
    number as number,
    integer as integer,
    signedinteger as signedinteger,
    unsignedinteger as unsignedinteger,
    inexact as inexact,
    floating as floating,
    complexfloating as complexfloating,
    int_ as int_,
    uint as uint,
    float_ as float_,
    complex_ as complex_,
)
from fcore.numpy.creation import (
    array as array,
    asarray as asarray,
    zeros as zeros,
    ones as ones,
    empty as empty,
    full as full,
    zeros_like as zeros_like,
    ones_like as ones_like,
    empty_like as empty_like,
    full_like as full_like,
    arange as arange,
    linspace as linspace,
    logspace as logspace,
    eye as eye,
    identity as identity,
    tri as tri,
    tril as tril,
    triu as triu,
    diag as diag,
    diagonal as diagonal,
    trace as trace,
    meshgrid as meshgrid,
    fromfunction as fromfunction,
    copy as copy,
    astype as astype,
)
from fcore.numpy.ufuncs_unary import (
    exp as exp,
    exp2 as exp2,
    log as log,
    log2 as log2,
    log10 as log10,
    log1p as log1p,
    expm1 as expm1,
    sqrt as sqrt,
    cbrt as cbrt,
    sin as sin,
    cos as cos,
    tan as tan,
    arcsin as arcsin,
    arccos as arccos,
    arctan as arctan,
    sinh as sinh,
    cosh as cosh,
    tanh as tanh,
    arcsinh as arcsinh,
    arccosh as arccosh,
    arctanh as arctanh,
    asin as asin,
    acos as acos,
    atan as atan,
    asinh as asinh,
    acosh as acosh,
    atanh as atanh,
    positive as positive,
    sign as sign,
    floor as floor,
    ceil as ceil,
    trunc as trunc,
    round as round,
    around as around,
    rint as rint,
    absolute as absolute,
    abs as abs,
    fabs as fabs,
    square as square,
    reciprocal as reciprocal,
    deg2rad as deg2rad,
    rad2deg as rad2deg,
    radians as radians,
    degrees as degrees,
    nan_to_num as nan_to_num,
    sinc as sinc,
    i0 as i0,
)
from fcore.numpy.ufuncs_logic import (
    invert as invert,
    bitwise_not as bitwise_not,
    bitwise_invert as bitwise_invert,
    logical_not as logical_not,
    isfinite as isfinite,
    isinf as isinf,
    isposinf as isposinf,
    isneginf as isneginf,
    isnan as isnan,
    left_shift as left_shift,
    right_shift as right_shift,
    bitwise_left_shift as bitwise_left_shift,
    bitwise_right_shift as bitwise_right_shift,
    bitwise_count as bitwise_count,
    equal as equal,
    not_equal as not_equal,
    less as less,
    less_equal as less_equal,
    greater as greater,
    greater_equal as greater_equal,
    where as where,
)
from fcore.numpy.ufuncs_parts import (
    real as real,
    imag as imag,
    conjugate as conjugate,
    conj as conj,
    signbit as signbit,
    nextafter as nextafter,
    copysign as copysign,
    frexp as frexp,
    ldexp as ldexp,
    modf as modf,
    spacing as spacing,
    angle as angle,
    iscomplex as iscomplex,
    isreal as isreal,
    iscomplexobj as iscomplexobj,
    isrealobj as isrealobj,
)
from fcore.numpy.ufuncs_binary import (
    true_divide as true_divide,
    divide as divide,
    floor_divide as floor_divide,
    remainder as remainder,
    mod as mod,
    fmod as fmod,
    divmod as divmod,
    power as power,
    pow as pow,
    float_power as float_power,
    arctan2 as arctan2,
    atan2 as atan2,
    hypot as hypot,
    clip as clip,
    heaviside as heaviside,
    fmax as fmax,
    fmin as fmin,
    gcd as gcd,
    lcm as lcm,
)
from fcore.numpy.reductions import (
    sum as sum,
    prod as prod,
    max as max,
    min as min,
    amax as amax,
    amin as amin,
    all as all,
    any as any,
    mean as mean,
    var as var,
    std as std,
    argmax as argmax,
    argmin as argmin,
    cumsum as cumsum,
    cumprod as cumprod,
    cumulative_sum as cumulative_sum,
    cumulative_prod as cumulative_prod,
    nancumsum as nancumsum,
    nancumprod as nancumprod,
    count_nonzero as count_nonzero,
    isclose as isclose,
    allclose as allclose,
    array_equal as array_equal,
    average as average,
    array_equiv as array_equiv,
)
from fcore.numpy.shape_ops import (
    shape as shape,
    ndim as ndim,
    size as size,
    reshape as reshape,
    ravel as ravel,
    transpose as transpose,
    permute_dims as permute_dims,
    matrix_transpose as matrix_transpose,
    swapaxes as swapaxes,
    moveaxis as moveaxis,
    rollaxis as rollaxis,
    squeeze as squeeze,
    expand_dims as expand_dims,
    broadcast_shapes as broadcast_shapes,
    broadcast_to as broadcast_to,
    broadcast_arrays as broadcast_arrays,
    concatenate as concatenate,
    concat as concat,
    stack as stack,
    atleast_1d as atleast_1d,
    atleast_2d as atleast_2d,
    atleast_3d as atleast_3d,
    hstack as hstack,
    vstack as vstack,
    dstack as dstack,
    column_stack as column_stack,
    flip as flip,
    fliplr as fliplr,
    flipud as flipud,
    tile as tile,
    repeat as repeat,
    split as split,
    array_split as array_split,
    hsplit as hsplit,
    vsplit as vsplit,
    roll as roll,
    isscalar as isscalar,
)
from fcore.numpy.padding import pad as pad
from fcore.numpy.products import (
    dot as dot,
    matmul as matmul,
    vdot as vdot,
    vecdot as vecdot,
    inner as inner,
    outer as outer,
    tensordot as tensordot,
    kron as kron,
    einsum as einsum,
    einsum_path as einsum_path,
    matvec as matvec,
    vecmat as vecmat,
    cross as cross,
)
from fcore.numpy.indexing import (
    take as take,
    take_along_axis as take_along_axis,
)
from fcore.numpy.sorting import (
    sort as sort,
    argsort as argsort,
    lexsort as lexsort,
    partition as partition,
    argpartition as argpartition,
    sort_complex as sort_complex,
    searchsorted as searchsorted,
)
from fcore.numpy.statistics import (
    quantile as quantile,
    percentile as percentile,
    median as median,
    nanquantile as nanquantile,
    nanpercentile as nanpercentile,
    nanmedian as nanmedian,
    ptp as ptp,
)
from fcore.numpy.searching import (
    nonzero as nonzero,
    flatnonzero as flatnonzero,
    argwhere as argwhere,
    bincount as bincount,
    compress as compress,
    extract as extract,
    select as select,
    digitize as digitize,
    isin as isin,
)
from fcore.numpy.manipulation import (
    diff as diff,
    ediff1d as ediff1d,
    append as append,
    insert as insert,
    delete as delete,
    rot90 as rot90,
    unstack as unstack,
    dsplit as dsplit,
    resize as resize,
    block as block,
    trim_zeros as trim_zeros,
    diagflat as diagflat,
    fill_diagonal as fill_diagonal,
    choose as choose,
)
from fcore.numpy.index_tricks import (
    tril_indices as tril_indices,
    triu_indices as triu_indices,
    tril_indices_from as tril_indices_from,
    triu_indices_from as triu_indices_from,
    diag_indices as diag_indices,
    diag_indices_from as diag_indices_from,
    indices as indices,
    ix_ as ix_,
    unravel_index as unravel_index,
    ravel_multi_index as ravel_multi_index,
    mgrid as mgrid,
    ogrid as ogrid,
    s_ as s_,
    index_exp as index_exp,
    r_ as r_,
    c_ as c_,
    mask_indices as mask_indices,
)
from fcore.numpy.numerical import (
    convolve as convolve,
    correlate as correlate,
    interp as interp,
    gradient as gradient,
    trapezoid as trapezoid,
    geomspace as geomspace,
    cov as cov,
    corrcoef as corrcoef,
    unwrap as unwrap,
)
from fcore.numpy.polynomial import (
    polyval as polyval,
    polyadd as polyadd,
    polysub as polysub,
    polymul as polymul,
    polydiv as polydiv,
    polyder as polyder,
    polyint as polyint,
    poly as poly,
    vander as vander,
)
from fcore.numpy.histograms import (
    histogram as histogram,
    histogram_bin_edges as histogram_bin_edges,
    histogram2d as histogram2d,
    histogramdd as histogramdd,
)
from fcore.numpy.windows import (
    bartlett as bartlett,
    blackman as blackman,
    hamming as hamming,
    hanning as hanning,
    kaiser as kaiser,
)
from fcore.numpy.bits import packbits as packbits, unpackbits as unpackbits
from fcore.numpy.updates import put as put, place as place, put_along_axis as put_along_axis
from fcore.numpy.data_io import (
    frombuffer as frombuffer,
    fromstring as fromstring,
    fromfile as fromfile,
    fromiter as fromiter,
    from_dlpack as from_dlpack,
    load as load,
)
from fcore.numpy.nanfunctions import (
    nansum as nansum,
    nanprod as nanprod,
    nanmax as nanmax,
    nanmin as nanmin,
    nanmean as nanmean,
    nanvar as nanvar,
    nanstd as nanstd,
    nanargmax as nanargmax,
    nanargmin as nanargmin,
)
from fcore.numpy.ufunc_objects import (
    ufunc as ufunc,
    frompyfunc as frompyfunc,
    add as add,
    subtract as subtract,
    multiply as multiply,
    maximum as maximum,
    minimum as minimum,
    logaddexp as logaddexp,
    logaddexp2 as logaddexp2,
    bitwise_and as bitwise_and,
    bitwise_or as bitwise_or,
    bitwise_xor as bitwise_xor,
    logical_and as logical_and,
    logical_or as logical_or,
    logical_xor as logical_xor,
    negative as negative,
)
from fcore.numpy.setops import (
    unique as unique,
    unique_all as unique_all,
    unique_counts as unique_counts,
    unique_inverse as unique_inverse,
    unique_values as unique_values,
    union1d as union1d,
    intersect1d as intersect1d,
    setdiff1d as setdiff1d,
    setxor1d as setxor1d,
)
from fcore.numpy.vectorize import (
    vectorize as vectorize,
    apply_along_axis as apply_along_axis,
    apply_over_axes as apply_over_axes,
    piecewise as piecewise,
)
from fcore.numpy.array_api import (
    __array_api_version__ as __array_api_version__,
    __array_namespace_info__ as __array_namespace_info__,
)
# NumPy's own: scalar-type classes, printing, saving (JAX re-exports these too).
from numpy import (
    array_repr as array_repr,
    array_str as array_str,
    character as character,
    flexible as flexible,
    get_printoptions as get_printoptions,
    iterable as iterable,
    object_ as object_,
    printoptions as printoptions,
    save as save,
    savez as savez,
    set_printoptions as set_printoptions,
)
from numpy.exceptions import ComplexWarning as ComplexWarning
from fcore.numpy import linalg as linalg
from fcore.numpy import fft as fft
from fcore.numpy.polynomial_linalg import polyfit as polyfit, roots as roots
from fcore.numpy import _methods

# Aliases (assignments, so that type checkers see them exported too).
ndarray = _Array
bool = bool_  # noqa: A001  # jnp.bool
single = float32
double = float64
csingle = complex64
cdouble = complex128
newaxis = None
pi: float = _np.pi
e: float = _np.e
inf: float = _np.inf
nan: float = _np.nan
euler_gamma: float = _np.euler_gamma

_methods.install()

_REMOVED = {
    "fix": "jax.numpy.fix was deprecated in JAX v0.9.0, and will be removed in JAX v0.10.0. Use jax.numpy.trunc instead.",
}


def __getattr__(name: str) -> object:
    """Names JAX removed raise ``AttributeError`` with JAX's message, as ``jax.numpy`` does."""
    message = _REMOVED.get(name)
    raise AttributeError(message or f"module 'fcore.numpy' has no attribute {name!r}")
