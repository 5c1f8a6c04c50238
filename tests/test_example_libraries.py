"""fcore.example_libraries against jax.example_libraries: the same keys give the same
parameters and outputs for stax layers and combinators, and every optimizer (with schedules,
clipping and state packing) takes the same steps."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.example_libraries import optimizers as _jopt
from jax.example_libraries import stax as _jstax

import fcore
import fcore.numpy as fnp
from fcore.example_libraries import optimizers as fopt
from fcore.example_libraries import stax as fstax

# JAX's example libraries are untyped; the oracle is called through Any.
jopt: Any = _jopt
jstax: Any = _jstax


def _same(ours: Any, theirs: Any, tol: float = 1e-5) -> None:
    o_leaves, o_tree = fcore.tree_util.tree_flatten(ours)
    t_leaves, t_tree = jax.tree_util.tree_flatten(theirs)
    assert str(o_tree).replace("PyTreeDef", "") == str(t_tree).replace("PyTreeDef", "")
    for o, t in zip(o_leaves, t_leaves, strict=True):
        assert np.asarray(o).dtype == np.asarray(t).dtype and np.shape(o) == np.shape(t)
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=tol, atol=tol)


def _net(stax: Any) -> Any:
    return stax.serial(
        stax.Conv(4, (3, 3), padding="SAME"),
        stax.BatchNorm(),
        stax.Relu,
        stax.MaxPool((2, 2), strides=(2, 2)),
        stax.FanOut(2),
        stax.parallel(stax.AvgPool((2, 2), padding="SAME"), stax.SumPool((1, 1))),
        stax.FanInConcat(),
        stax.ConvTranspose(3, (2, 2), strides=(2, 2)),
        stax.Tanh,
        stax.Flatten,
        stax.Dense(5),
        stax.FanOut(2),
        stax.parallel(stax.Identity, stax.serial(stax.Gelu, stax.Dense(5))),
        stax.FanInSum,
        stax.shape_dependent(lambda shape: stax.Dense(shape[-1])),
        stax.LogSoftmax,
    )


def test_stax_network_matches_jax() -> None:
    x = np.random.RandomState(0).randn(2, 6, 6, 3).astype(np.float32)
    f_init, f_apply = _net(fstax)
    j_init, j_apply = _net(jstax)
    f_shape, f_params = f_init(fcore.random.PRNGKey(0), x.shape)
    j_shape, j_params = j_init(jax.random.PRNGKey(0), x.shape)
    assert tuple(f_shape) == tuple(j_shape)
    _same(f_params, j_params)
    _same(f_apply(f_params, x), j_apply(j_params, x), tol=1e-4)


def test_stax_elementwise_and_dropout_match_jax() -> None:
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    names = ["Relu", "Tanh", "Exp", "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu"]
    for name in names:
        _same(getattr(fstax, name)[1]((), x), getattr(jstax, name)[1]((), x))
    f_init, f_apply = fstax.serial(fstax.Dense(4), fstax.Dropout(0.7))
    j_init, j_apply = jstax.serial(jstax.Dense(4), jstax.Dropout(0.7))
    fp = f_init(fcore.random.PRNGKey(1), (3, 4))[1]
    jp = j_init(jax.random.PRNGKey(1), (3, 4))[1]
    _same(f_apply(fp, x, rng=fcore.random.PRNGKey(2)), j_apply(jp, x, rng=jax.random.PRNGKey(2)))
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        fstax.Dropout(0.5)[1]((), x)
    assert fstax.Dropout(0.5, mode="test")[1]((), x, rng=fcore.random.PRNGKey(0)) is x


def _loss(np_: Any) -> Any:
    return lambda p: np_.sum((p["w"] - 1.0) ** 2) + np_.sum(p["b"] ** 4)


@pytest.mark.parametrize(
    "name, args",
    [
        ("sgd", (0.1,)),
        ("momentum", (0.1, 0.9)),
        ("nesterov", (0.1, 0.9)),
        ("adagrad", (0.1,)),
        ("rmsprop", (0.1,)),
        ("rmsprop_momentum", (0.1,)),
        ("adam", (0.1,)),
        ("adamax", (0.1,)),
        ("sm3", (0.1,)),
    ],
)
def test_optimizers_match_jax(name: str, args: tuple[float, ...]) -> None:
    params = {"w": np.arange(6.0, dtype=np.float32).reshape(2, 3), "b": np.float32(0.5)}
    results = []
    for opt_lib, grad, np_ in ((fopt, fcore.grad, fnp), (jopt, jax.grad, jnp)):
        init, update, get_params = getattr(opt_lib, name)(*args)
        state = init(params)
        for i in range(3):
            state = update(i, grad(_loss(np_))(get_params(state)), state)
        results.append(get_params(state))
    _same(*results)


def test_schedules_clipping_and_state_packing_match_jax() -> None:
    schedules = [
        ("exponential_decay", (0.1, 10, 0.5)),
        ("inverse_time_decay", (0.1, 10, 0.5)),
        ("polynomial_decay", (0.1, 10, 0.01, 2.0)),
        ("piecewise_constant", ([2, 5], [0.1, 0.05, 0.01])),
    ]
    for name, args in schedules:
        for i in (0, 3, 7, 12):
            _same(fnp.asarray(getattr(fopt, name)(*args)(i)), jnp.asarray(getattr(jopt, name)(*args)(i)))
    _same(fnp.asarray(fopt.inverse_time_decay(0.1, 4, 0.5, staircase=True)(7)), jnp.asarray(jopt.inverse_time_decay(0.1, 4, 0.5, staircase=True)(7)))
    grads = {"a": np.full((3,), 4.0, np.float32), "b": np.float32(3.0)}
    _same(fopt.l2_norm(grads), jopt.l2_norm(grads))
    _same(fopt.clip_grads(grads, 1.0), jopt.clip_grads(grads, 1.0))
    with pytest.raises(ValueError, match="one shorter"):
        fopt.piecewise_constant([1, 2], [0.1])

    init, update, get_params = fopt.momentum(fopt.exponential_decay(0.1, 5, 0.5), 0.9)
    state = update(0, grads, init(grads))
    unpacked = fopt.unpack_optimizer_state(state)
    assert isinstance(unpacked["a"], fopt.JoinPoint)
    repacked = fopt.pack_optimizer_state(unpacked)
    _same(get_params(repacked), get_params(state))
    assert fcore.tree_util.tree_structure(repacked) == fcore.tree_util.tree_structure(state)
    with pytest.raises(TypeError, match="did not match the parameter tree structure"):
        update(1, [1.0, 2.0], state)
    # The state is a pytree: a jitted step takes and returns it.
    stepped = fcore.jit(update)(1, grads, state)
    _same(get_params(stepped), get_params(update(1, grads, state)))
