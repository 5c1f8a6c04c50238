"""``fcore.random``: JAX's counter-based PRNG (``jax.random``), bit for bit.

Keys are threefry2x32 keys, derived as JAX 0.10 derives them by default
(``jax_threefry_partitionable``), and every sampler is JAX's algorithm, so the same seed
gives the same numbers as JAX under ``jit``, ``vmap``, ``grad`` and loops
(docs/guide.md, "Random numbers").
"""

from fcore.random._continuous import (
    cauchy as cauchy,
    double_sided_maxwell as double_sided_maxwell,
    exponential as exponential,
    gumbel as gumbel,
    laplace as laplace,
    logistic as logistic,
    lognormal as lognormal,
    maxwell as maxwell,
    normal as normal,
    pareto as pareto,
    rayleigh as rayleigh,
    triangular as triangular,
    truncated_normal as truncated_normal,
    wald as wald,
    weibull_min as weibull_min,
)
from fcore.random._discrete import (
    binomial as binomial,
    categorical as categorical,
    choice as choice,
    geometric as geometric,
    multinomial as multinomial,
    permutation as permutation,
    poisson as poisson,
)
from fcore.random._gamma import (
    ball as ball,
    beta as beta,
    chisquare as chisquare,
    dirichlet as dirichlet,
    f as f,
    gamma as gamma,
    generalized_normal as generalized_normal,
    loggamma as loggamma,
    random_gamma_p as random_gamma_p,
    t as t,
)
from fcore.random._key_ops import (
    PRNGKey as PRNGKey,
    bits as bits,
    clone as clone,
    fold_in as fold_in,
    key as key,
    key_data as key_data,
    key_dtype as key_dtype,
    key_impl as key_impl,
    split as split,
    wrap_key_data as wrap_key_data,
)
from fcore.random._keys import PRNGKeyArray as PRNGKeyArray, PRNGSpec as PRNGSpec
from fcore.random._multivariate import multivariate_normal as multivariate_normal, orthogonal as orthogonal
from fcore.random._uniform import (
    bernoulli as bernoulli,
    rademacher as rademacher,
    randint as randint,
    uniform as uniform,
)
