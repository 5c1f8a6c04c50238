"""Optimizers as ``(init_fun, update_fun, get_params)`` triples (``jax.example_libraries.optimizers``).

``init_fun(params)`` makes an :class:`OptimizerState`, ``update_fun(step, grads, state)``
advances it, ``get_params(state)`` reads the parameters back. Each optimizer is written for a
single array and lifted to pytrees of parameters by the :func:`optimizer` decorator. Step sizes
are scalars or schedules (functions of the step number)::

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(0, fcore.grad(loss)(get_params(state)), state)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import fcore.numpy as fnp
from fcore import tree_util
from fcore.interpreters.array import Array

__all__ = [
    "InitFn", "JoinPoint", "Optimizer", "OptimizerState", "ParamsFn", "Schedule", "UpdateFn", "adagrad", "adam", "adamax", "clip_grads", "constant", "exponential_decay",
    "inverse_time_decay", "l2_norm", "make_schedule", "momentum", "nesterov", "optimizer", "pack_optimizer_state",
    "piecewise_constant", "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd", "sm3", "unpack_optimizer_state",
]

#: Parameters are arbitrary pytrees of arrays; so are gradient updates and per-array states.
Params = Any
State = Any
Updates = Any
Step = int
Schedule = Callable[[Step], Any]


class OptimizerState(NamedTuple):
    """The state of an optimizer over a pytree of parameters: the per-array states, flattened
    (``packed_state``), the parameters' tree structure and each per-array state's structure."""

    packed_state: Sequence[Any]
    tree_def: tree_util.PyTreeDef
    subtree_defs: tuple[tree_util.PyTreeDef, ...]


tree_util.register_pytree_node(
    OptimizerState,
    lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]),
)

InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]


class Optimizer(NamedTuple):
    """An optimizer over pytrees of parameters."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


_ArrayTriple = tuple[Callable[[Any], Any], Callable[[Step, Any, Any], Any], Callable[[Any], Any]]


def _unzip_flatten(trees: Sequence[Any]) -> tuple[tuple[Any, ...], tuple[tree_util.PyTreeDef, ...]]:
    pairs = [tree_util.tree_flatten(t) for t in trees]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def optimizer(opt_maker: Callable[..., _ArrayTriple]) -> Callable[..., Optimizer]:
    """Lift an optimizer written for single arrays (``init``, ``update``, ``get_params``) to
    one over pytrees of parameters, whose state is an :class:`OptimizerState`."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Params) -> OptimizerState:
            x0_flat, tree = tree_util.tree_flatten(x0_tree)
            states_flat, subtrees = _unzip_flatten([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i: Step, grad_tree: Updates, opt_state: OptimizerState) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_util.tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match the parameter "
                    f"tree structure with which it was initialized: parameter tree {tree} and grad tree {tree2}."
                )
            states = [tree_util.tree_unflatten(s, f) for s, f in zip(subtrees, states_flat, strict=True)]
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states, strict=True)]
            new_states_flat, subtrees2 = _unzip_flatten(new_states)
            for subtree, subtree2 in zip(subtrees, subtrees2, strict=True):
                if subtree2 != subtree:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not match its input "
                        f"structure: input {subtree} and output {subtree2}."
                    )
            return OptimizerState(new_states_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Params:
            states_flat, tree, subtrees = opt_state
            states = [tree_util.tree_unflatten(s, f) for s, f in zip(subtrees, states_flat, strict=True)]
            return tree_util.tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _first(state: tuple[Any, ...]) -> Any:
    return state[0]


@optimizer
def sgd(step_size: float | Schedule) -> _ArrayTriple:
    """Stochastic gradient descent: ``x - step_size(i) * g``."""
    schedule = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0

    def update(i: Step, g: Any, x: Any) -> Any:
        return x - schedule(i) * g

    def get_params(x: Any) -> Any:
        return x

    return init, update, get_params


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> _ArrayTriple:
    """SGD with momentum coefficient ``mass``."""
    schedule = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0)

    def update(i: Step, g: Any, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        return x - schedule(i) * velocity, velocity

    return init, update, _first


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> _ArrayTriple:
    """SGD with Nesterov momentum."""
    schedule = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0)

    def update(i: Step, g: Any, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        return x - schedule(i) * (mass * velocity + g), velocity

    return init, update, _first


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> _ArrayTriple:
    """Adagrad (Duchi et al. 2011) with momentum."""
    schedule = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Any, state: Any) -> Any:
        x, g_sq, m = state
        g_sq += fnp.square(g)
        g_sq_inv_sqrt = fnp.where(g_sq > 0, 1.0 / fnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - schedule(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> _ArrayTriple:
    """RMSProp: steps scaled by a running root mean square of the gradients."""
    schedule = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0)

    def update(i: Step, g: Any, state: Any) -> Any:
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        return x - schedule(i) * g / fnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, _first


@optimizer
def rmsprop_momentum(
    step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9
) -> _ArrayTriple:
    """RMSProp with momentum."""
    schedule = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Any, state: Any) -> Any:
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + schedule(i) * g / fnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, _first


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> _ArrayTriple:
    """Adam (Kingma and Ba 2015) with bias-corrected moment estimates."""
    schedule = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Any, state: Any) -> Any:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * fnp.square(g) + b2 * v
        mhat = m / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - fnp.asarray(b2, m.dtype) ** (i + 1))
        return x - schedule(i) * mhat / (fnp.sqrt(vhat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> _ArrayTriple:
    """AdaMax: Adam with the infinity norm in place of the second moment."""
    schedule = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i: Step, g: Any, state: Any) -> Any:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = fnp.maximum(b2 * u, fnp.abs(g))
        x = x - (schedule(i) / (1 - fnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u

    return init, update, _first


def _splice(seq: Sequence[Any], i: int, x: list[Any]) -> list[Any]:
    lst = list(seq)
    lst[i : i + 1] = x
    return lst


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9) -> _ArrayTriple:
    """SM3 (Anil et al. 2019): memory-efficient adaptive steps, one accumulator per axis."""
    schedule = make_schedule(step_size)

    def broadcast_into(ndim: int, x: Array, axis: int) -> Array:
        return x[tuple(_splice([None] * ndim, axis, [slice(None)]))]

    def init(x0: Any) -> Any:
        x_shape = fnp.shape(x0)
        x0 = fnp.atleast_1d(x0)
        vs = [fnp.zeros(sz, dtype=x0.dtype) for sz in x0.shape]
        return x0, fnp.zeros_like(x0), vs, x_shape

    def update(i: Step, g: Any, state: Any) -> Any:
        x, m, vs, x_shape = state
        vs = [broadcast_into(g.ndim, v, k) for k, v in enumerate(vs)]
        accum = functools.reduce(fnp.minimum, vs) + fnp.square(g)
        accum_inv_sqrt = fnp.where(accum > 0, 1.0 / fnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - schedule(i) * m
        vs = [accum.max(tuple(_splice(range(x.ndim), j, []))) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state: Any) -> Any:
        x, _, _, x_shape = state
        return x.reshape(x_shape)

    return init, update, get_params


def constant(step_size: Any) -> Schedule:
    """The schedule that is ``step_size`` at every step."""

    def schedule(i: Step) -> Any:
        return step_size

    return schedule


def exponential_decay(step_size: float, decay_steps: float, decay_rate: float) -> Schedule:
    """``step_size * decay_rate ** (i / decay_steps)``."""

    def schedule(i: Step) -> Any:
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(step_size: float, decay_steps: float, decay_rate: float, staircase: bool = False) -> Schedule:
    """``step_size / (1 + decay_rate * i / decay_steps)``, the quotient floored with ``staircase``."""
    if staircase:

        def schedule(i: Step) -> Any:
            return step_size / (1 + decay_rate * fnp.floor(i / decay_steps))

    else:

        def schedule(i: Step) -> Any:
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(step_size: float, decay_steps: int, final_step_size: float, power: float = 1.0) -> Schedule:
    """From ``step_size`` to ``final_step_size`` along ``(1 - i / decay_steps) ** power``."""

    def schedule(step_num: Step) -> Any:
        clipped = fnp.minimum(step_num, decay_steps)
        step_mult = (1 - clipped / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[k]`` on steps after ``k`` of the ``boundaries``."""
    boundaries = fnp.array(boundaries)
    values = fnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i: Step) -> Any:
        return values[fnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as is; a scalar as the :func:`constant` schedule; anything else a TypeError."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if fnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


def l2_norm(tree: Any) -> Array:
    """The l2 norm of a pytree of arrays (useful for weight decay)."""
    leaves = tree_util.tree_leaves(tree)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """Gradients scaled down so that their :func:`l2_norm` is at most ``max_norm``."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(lambda g: fnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks the boundary between two joined (nested) pytrees."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self) -> Any:
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as the parameters' pytree with a :class:`JoinPoint` (holding that array's
    state) at each leaf, for serialization."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_util.tree_unflatten(s, f) for s, f in zip(subtree_defs, states_flat, strict=True)]
    return tree_util.tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of :func:`unpack_optimizer_state`."""
    sentinels, tree_def = tree_util.tree_flatten(marked_pytree)
    assert all(isinstance(s, JoinPoint) for s in sentinels)
    states_flat, subtree_defs = _unzip_flatten([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)
