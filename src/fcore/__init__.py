"""fcore: JAX's core as a functional-core, fully typed Python library.

The public face: re-exports only. See docs/ for the user guide.
"""

from fcore import interpreters as _interpreters  # installs bind; must come first
from fcore import errors as errors
from fcore import tree_util as tree_util
from fcore import tree as tree
from fcore import lax as lax
from fcore import core as core
from fcore.api.staging import ShapeDtypeStruct as ShapeDtypeStruct, make_jaxpr as make_jaxpr
from fcore.environment import print_environment_info as print_environment_info
from fcore.config import (
    allow_f16_reductions as allow_f16_reductions,
    array_garbage_collection_guard as array_garbage_collection_guard,
    auto_pcast as auto_pcast,
    check_tracer_leaks as check_tracer_leaks,
    checking_leaks as checking_leaks,
    config as config,
    debug_infs as debug_infs,
    debug_key_reuse as debug_key_reuse,
    debug_nans as debug_nans,
    default_device as default_device,
    default_matmul_precision as default_matmul_precision,
    default_prng_impl as default_prng_impl,
    disable_jit as disable_jit,
    enable_checks as enable_checks,
    enable_custom_prng as enable_custom_prng,
    enable_x64 as enable_x64,
    explain_cache_misses as explain_cache_misses,
    jax2tf_associative_scan_reductions as jax2tf_associative_scan_reductions,
    legacy_prng_key as legacy_prng_key,
    log_compiles as log_compiles,
    no_execution as no_execution,
    no_tracing as no_tracing,
    numpy_dtype_promotion as numpy_dtype_promotion,
    numpy_rank_promotion as numpy_rank_promotion,
    remove_size_one_mesh_axis_from_type as remove_size_one_mesh_axis_from_type,
    softmax_custom_jvp as softmax_custom_jvp,
    thread_guard as thread_guard,
    threefry_partitionable as threefry_partitionable,
    transfer_guard as transfer_guard,
    transfer_guard_device_to_device as transfer_guard_device_to_device,
    transfer_guard_device_to_host as transfer_guard_device_to_host,
    transfer_guard_host_to_device as transfer_guard_host_to_device,
)
from fcore.errors import (
    ConcretizationError as ConcretizationError,
    JaxprParseError as JaxprParseError,
    JaxprTypeError as JaxprTypeError,
    TypePromotionError as TypePromotionError,
    UnexpectedTracerError as UnexpectedTracerError,
)
from fcore.interpreters.array import Array as Array

__version__ = "0.1.0"
from fcore.api.autodiff import (
    grad as grad,
    jvp as jvp,
    linearize as linearize,
    value_and_grad as value_and_grad,
    vjp as vjp,
)
from fcore.api.jacobians import hessian as hessian, jacfwd as jacfwd, jacobian as jacobian, jacrev as jacrev
from fcore.api.vectorize import vmap as vmap
from fcore import transforms as transforms
from fcore.api.jit import (
    block_until_ready as block_until_ready,
    clear_caches as clear_caches,
    device_put as device_put,
    jit as jit,
)
from fcore.api import eager_placed as _eager_placed  # installs how eager ops run on placed arrays
from fcore.api.devices import (
    device_count as device_count,
    devices as devices,
    local_device_count as local_device_count,
    local_devices as local_devices,
    process_count as process_count,
    process_index as process_index,
)
from fcore import sharding as sharding
from fcore.sharding import Device as Device, NamedSharding as NamedSharding, P as P, make_mesh as make_mesh, set_mesh as set_mesh
from fcore.api.processes import (
    host_count as host_count,
    host_id as host_id,
    host_ids as host_ids,
    process_indices as process_indices,
)
from fcore.api.global_arrays import (
    live_arrays as live_arrays,
    make_array_from_single_device_arrays as make_array_from_single_device_arrays,
)
from fcore.api.shard_map import shard_map as shard_map
from fcore.api.pmap import pmap as pmap
from fcore.api.placement import (
    make_array_from_callback as make_array_from_callback,
    make_array_from_process_local_data as make_array_from_process_local_data,
)
from fcore import distributed as distributed
from fcore import numpy as numpy  # also installs the Array operators and methods
from fcore import dtypes as dtypes
from fcore.dtypes import float0 as float0
from fcore import nn as nn
from fcore import random as random
from fcore import typing as typing
from fcore import scipy as scipy
from fcore import ad_checkpoint as ad_checkpoint
from fcore.ad_checkpoint import checkpoint_policies as checkpoint_policies
from fcore.api.closures import closure_convert as closure_convert, custom_gradient as custom_gradient
from fcore.api.host import (
    copy_to_host_async as copy_to_host_async, default_backend as default_backend, device_get as device_get,
)
from fcore import dlpack as dlpack
from fcore.api.linear_transpose import linear_transpose as linear_transpose
from fcore.api.fwd_and_bwd import fwd_and_bwd as fwd_and_bwd
from fcore.lax.sharding_constraint import reshard as reshard
from fcore import custom_derivatives as custom_derivatives
from fcore import extend as extend
from fcore import ffi as ffi
from fcore import flatten_util as flatten_util
from fcore.api.custom import (
    checkpoint as checkpoint,
    custom_jvp as custom_jvp,
    custom_vjp as custom_vjp,
    remat as remat,
)
from fcore import debug as debug
from fcore import experimental as experimental
from fcore import image as image
from fcore import ops as ops
from fcore import custom_batching as custom_batching
from fcore import profiler as profiler
from fcore.lax.callbacks import effects_barrier as effects_barrier, pure_callback as pure_callback
from fcore.api.front_end import (
    ensure_compile_time_eval as ensure_compile_time_eval,
    eval_shape as eval_shape,
    named_call as named_call,
    named_scope as named_scope,
    typeof as typeof,
)
from fcore import ref as ref
from fcore import ad as ad
from fcore.api.refs import (
    Ref as Ref,
    empty_ref as empty_ref,
    free_ref as free_ref,
    freeze as freeze,
    new_ref as new_ref,
)
