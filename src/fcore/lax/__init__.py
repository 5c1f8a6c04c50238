"""``fcore.lax``: primitive-level operations with ``jax.lax``'s names and parameters."""

from fcore.lax.elementwise import (
    abs as abs, acos as acos, acosh as acosh, add as add, asin as asin,
    asinh as asinh, atan as atan, atan2 as atan2, atanh as atanh, cbrt as cbrt, ceil as ceil,
    clamp as clamp, complex as complex, conj as conj, convert_element_type as convert_element_type,
    cos as cos, cosh as cosh, div as div, eq as eq, erf as erf, exp as exp, exp2 as exp2,
    expm1 as expm1, floor as floor, ge as ge, gt as gt, imag as imag, integer_pow as integer_pow,
    is_finite as is_finite, le as le, log as log, log1p as log1p, logistic as logistic, lt as lt,
    max as max, min as min, mul as mul, ne as ne, neg as neg, nextafter as nextafter,
    pow as pow, real as real, reciprocal as reciprocal,
    rem as rem, round as round, rsqrt as rsqrt, select as select, select_n as select_n, sign as sign, sin as sin,
    sinh as sinh, sqrt as sqrt, square as square, stop_gradient as stop_gradient, sub as sub,
    tan as tan, tanh as tanh,
)
from fcore.lax.elementwise import not_ as not_, and_ as and_, or_ as or_, xor as xor
from fcore.lax.elementwise import (
    shift_left as shift_left, shift_right_arithmetic as shift_right_arithmetic,
    shift_right_logical as shift_right_logical,
)

# JAX's names for the logical/bitwise primitives' user functions.
bitwise_and = and_
bitwise_or = or_
bitwise_xor = xor
bitwise_not = not_
from fcore.lax import _vspace as _vspace  # registers the ops fcore.transforms needs
from fcore.lax.shapes import (
    broadcast as broadcast, broadcast_in_dim as broadcast_in_dim, broadcasted_iota as broadcasted_iota,
    concatenate as concatenate, expand_dims as expand_dims, iota as iota, pad as pad, reshape as reshape,
    rev as rev, squeeze as squeeze, transpose as transpose,
)
from fcore.lax.slicing import (
    dynamic_index_in_dim as dynamic_index_in_dim, dynamic_slice as dynamic_slice,
    dynamic_slice_in_dim as dynamic_slice_in_dim, dynamic_update_index_in_dim as dynamic_update_index_in_dim,
    dynamic_update_slice as dynamic_update_slice, dynamic_update_slice_in_dim as dynamic_update_slice_in_dim,
    index_in_dim as index_in_dim, slice as slice, slice_in_dim as slice_in_dim,
)
from fcore.lax.reductions import (
    argmax as argmax, argmin as argmin, cumlogsumexp as cumlogsumexp, cummax as cummax,
    cummin as cummin, cumprod as cumprod, cumsum as cumsum, reduce_and as reduce_and,
    reduce_max as reduce_max, reduce_min as reduce_min, reduce_or as reduce_or,
    reduce_prod as reduce_prod, reduce_sum as reduce_sum, reduce_xor as reduce_xor,
)
from fcore.lax.dot import (
    DotDimensionNumbers as DotDimensionNumbers, Precision as Precision, dot as dot,
    dot_general as dot_general,
)
from fcore.lax.gather_scatter import (
    GatherDimensionNumbers as GatherDimensionNumbers, GatherScatterMode as GatherScatterMode,
    ScatterDimensionNumbers as ScatterDimensionNumbers, gather as gather, scatter as scatter,
    scatter_add as scatter_add, scatter_max as scatter_max, scatter_min as scatter_min, scatter_mul as scatter_mul,
    scatter_sub as scatter_sub, index_take as index_take,
)
from fcore.lax.control_flow import (
    cond as cond, fori_loop as fori_loop, map as map, scan as scan, switch as switch, while_loop as while_loop,
)
from fcore.lax.sorting import sort as sort, sort_key_val as sort_key_val, top_k as top_k
from fcore.lax.special import (
    digamma as digamma, erf_inv as erf_inv, erfc as erfc, lgamma as lgamma, polygamma as polygamma, zeta as zeta,
)
from fcore.lax.shapes import (
    broadcast_to_rank as broadcast_to_rank, collapse as collapse, full as full, full_like as full_like,
    stack as stack, tile as tile,
)
from fcore.lax.slicing import split as split, unstack as unstack
from fcore.lax.reductions import associative_scan as associative_scan, reduce as reduce
from fcore.lax.dot import batch_matmul as batch_matmul
from fcore.lax.bits import (
    bitcast_convert_type as bitcast_convert_type, clz as clz, population_count as population_count,
)


# The primitive objects, as jax.lax exports them (for interpreters' rule tables and jaxpr matching).
from fcore.lax.elementwise import (
    abs_p as abs_p, acos_p as acos_p, acosh_p as acosh_p, add_p as add_p, and_p as and_p, asin_p as asin_p,
    asinh_p as asinh_p, atan2_p as atan2_p, atan_p as atan_p, atanh_p as atanh_p, cbrt_p as cbrt_p,
    ceil_p as ceil_p, clamp_p as clamp_p, complex_p as complex_p, conj_p as conj_p,
    convert_element_type_p as convert_element_type_p, cos_p as cos_p, cosh_p as cosh_p, div_p as div_p,
    eq_p as eq_p, erf_p as erf_p, exp2_p as exp2_p, exp_p as exp_p, expm1_p as expm1_p, floor_p as floor_p,
    ge_p as ge_p, gt_p as gt_p, imag_p as imag_p, integer_pow_p as integer_pow_p, is_finite_p as is_finite_p,
    le_p as le_p, log1p_p as log1p_p, log_p as log_p, logistic_p as logistic_p, lt_p as lt_p, max_p as max_p,
    min_p as min_p, mul_p as mul_p, ne_p as ne_p, neg_p as neg_p, nextafter_p as nextafter_p, not_p as not_p,
    or_p as or_p, pow_p as pow_p, real_p as real_p, rem_p as rem_p, round_p as round_p, rsqrt_p as rsqrt_p,
    select_n_p as select_n_p, shift_left_p as shift_left_p,
    shift_right_arithmetic_p as shift_right_arithmetic_p, shift_right_logical_p as shift_right_logical_p,
    sign_p as sign_p, sin_p as sin_p, sinh_p as sinh_p, sqrt_p as sqrt_p, stop_gradient_p as stop_gradient_p,
    sub_p as sub_p, tan_p as tan_p, tanh_p as tanh_p, xor_p as xor_p,
)
from fcore.lax.shapes import (
    broadcast_in_dim_p as broadcast_in_dim_p, concatenate_p as concatenate_p, iota_p as iota_p, pad_p as pad_p,
    reshape_p as reshape_p, rev_p as rev_p, squeeze_p as squeeze_p, transpose_p as transpose_p,
)
from fcore.lax.slicing import (
    dynamic_slice_p as dynamic_slice_p, dynamic_update_slice_p as dynamic_update_slice_p, slice_p as slice_p,
)
from fcore.lax.gather_scatter import (
    gather_p as gather_p, scatter_add_p as scatter_add_p, scatter_max_p as scatter_max_p,
    scatter_min_p as scatter_min_p, scatter_mul_p as scatter_mul_p, scatter_p as scatter_p,
)
from fcore.lax.reductions import (
    argmax_p as argmax_p, argmin_p as argmin_p, cumlogsumexp_p as cumlogsumexp_p, cummax_p as cummax_p,
    cummin_p as cummin_p, cumprod_p as cumprod_p, cumsum_p as cumsum_p, reduce_and_p as reduce_and_p,
    reduce_max_p as reduce_max_p, reduce_min_p as reduce_min_p, reduce_or_p as reduce_or_p,
    reduce_prod_p as reduce_prod_p, reduce_sum_p as reduce_sum_p, reduce_xor_p as reduce_xor_p,
)
from fcore.lax.dot import (
    dot_general_p as dot_general_p,
)
from fcore.lax.sorting import (
    sort_p as sort_p, top_k_p as top_k_p,
)
from fcore.lax.special import (
    digamma_p as digamma_p, erf_inv_p as erf_inv_p, erfc_p as erfc_p, lgamma_p as lgamma_p,
    polygamma_p as polygamma_p, zeta_p as zeta_p,
)
from fcore.lax.control_flow import (
    cond_p as cond_p, scan_p as scan_p, while_p as while_p,
)
from fcore.lax.igamma import (
    igamma as igamma, igamma_grad_a as igamma_grad_a, igamma_grad_a_p as igamma_grad_a_p, igamma_p as igamma_p,
    igammac as igammac, igammac_p as igammac_p, random_gamma_grad as random_gamma_grad,
)
from fcore.lax.betainc import betainc as betainc, regularized_incomplete_beta_p as regularized_incomplete_beta_p
from fcore.lax.bessel import (
    bessel_i0e as bessel_i0e, bessel_i0e_p as bessel_i0e_p, bessel_i1e as bessel_i1e, bessel_i1e_p as bessel_i1e_p,
)
from fcore.lax.bits import (
    bitcast_convert_type_p as bitcast_convert_type_p, clz_p as clz_p, population_count_p as population_count_p,
)
from fcore.lax.sharding_constraint import (
    sharding_constraint_p as sharding_constraint_p, with_sharding_constraint as with_sharding_constraint,
)
from fcore.lax.parallel import (
    all_gather as all_gather, all_gather_p as all_gather_p, all_to_all as all_to_all, all_to_all_p as all_to_all_p,
    axis_index as axis_index, axis_index_p as axis_index_p, axis_size as axis_size, pmax as pmax, pmax_p as pmax_p,
    pmean as pmean, pmin as pmin, pmin_p as pmin_p, ppermute as ppermute, ppermute_p as ppermute_p, psum as psum,
    psum_p as psum_p, psum_scatter as psum_scatter, psum_scatter_p as psum_scatter_p,
)
from fcore.lax.pcast import pcast as pcast
from fcore.lax.convolution import (
    ConvDimensionNumbers as ConvDimensionNumbers,
    ConvGeneralDilatedDimensionNumbers as ConvGeneralDilatedDimensionNumbers, conv as conv, conv_dimension_numbers as conv_dimension_numbers,
    conv_general_dilated as conv_general_dilated, conv_general_dilated_p as conv_general_dilated_p,
    conv_transpose as conv_transpose, conv_with_general_padding as conv_with_general_padding,
    padtype_to_pads as padtype_to_pads, conv_general_dilated_patches as conv_general_dilated_patches,
    conv_general_shape_tuple as conv_general_shape_tuple, conv_shape_tuple as conv_shape_tuple,
    conv_transpose_shape_tuple as conv_transpose_shape_tuple, conv_general_permutations as conv_general_permutations,
)
from fcore.lax.windowed_reductions import (
    reduce_window as reduce_window, reduce_window_max_p as reduce_window_max_p,
    reduce_window_min_p as reduce_window_min_p, reduce_window_p as reduce_window_p,
    reduce_window_shape_tuple as reduce_window_shape_tuple, reduce_window_sum_p as reduce_window_sum_p,
    select_and_gather_add_p as select_and_gather_add_p, select_and_scatter_add_p as select_and_scatter_add_p,
)
from fcore.lax.fft import FftType as FftType, fft as fft, fft_p as fft_p
from fcore.lax.optimization_barrier import (
    optimization_barrier as optimization_barrier, optimization_barrier_p as optimization_barrier_p,
)
from fcore.lax.reduce_precision import reduce_precision as reduce_precision, reduce_precision_p as reduce_precision_p
from fcore.lax.shape_helpers import broadcast_like as broadcast_like, broadcast_shapes as broadcast_shapes, empty as empty
from fcore.lax.rng_bit_generator import (
    RandomAlgorithm as RandomAlgorithm, rng_bit_generator as rng_bit_generator,
    rng_bit_generator_p as rng_bit_generator_p,
)
from fcore.lax import linalg as linalg
from fcore.lax.solves import (
    custom_linear_solve as custom_linear_solve, custom_root as custom_root, linear_solve_p as linear_solve_p,
)
from fcore.lax.multiply_high import mulhi as mulhi, mulhi_p as mulhi_p
from fcore.lax.ragged_dot import (
    RaggedDotDimensionNumbers as RaggedDotDimensionNumbers, ragged_dot as ragged_dot,
    ragged_dot_general as ragged_dot_general,
)
from fcore.lax.ann import approx_max_k as approx_max_k, approx_min_k as approx_min_k, approx_top_k_p as approx_top_k_p
from fcore.lax.control_flow.platform_dependent import platform_dependent as platform_dependent
