"""Issue 3 workloads: staging grad/jvp/linearize/vmap of chains, eager grad, jaxpr size."""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Result, compare
from benchmarks.workloads import chain


def run() -> list[Result]:
    import jax
    import jax.numpy as jnp

    import fcore
    import fcore.numpy as fnp

    x = np.float32(0.5)
    xs = np.linspace(0, 1, 8, dtype=np.float32)
    results = []
    for n in (100, 1_000, 5_000):
        results.append(compare(
            f"make_jaxpr(grad(chain)) N={n} (per op)",
            lambda: fcore.make_jaxpr(fcore.grad(chain(fnp, n)))(x),
            lambda: jax.make_jaxpr(jax.grad(chain(jnp, n)))(x),
            repeats=3 if n == 5_000 else 5, scale=1e6 / n, target="<= 0.3",
        ))
    n = 1_000
    results.append(compare(
        "make_jaxpr(jvp(chain)) N=1000 (per op)",
        lambda: fcore.make_jaxpr(lambda p: fcore.jvp(chain(fnp, n), (p,), (p,)))(x),
        lambda: jax.make_jaxpr(lambda p: jax.jvp(chain(jnp, n), (p,), (p,)))(x),
        repeats=5, scale=1e6 / n, target="<= 0.3",
    ))
    results.append(compare(
        "make_jaxpr(linearize(chain)) N=1000 (per op)",
        lambda: fcore.make_jaxpr(lambda p: fcore.linearize(chain(fnp, n), p)[1](p))(x),
        lambda: jax.make_jaxpr(lambda p: jax.linearize(chain(jnp, n), p)[1](p))(x),
        repeats=5, scale=1e6 / n, target="<= 0.3",
    ))
    results.append(compare(
        "make_jaxpr(vmap(chain)) N=1000 (per op)",
        lambda: fcore.make_jaxpr(fcore.vmap(chain(fnp, n)))(xs),
        lambda: jax.make_jaxpr(jax.vmap(chain(jnp, n)))(xs),
        repeats=5, scale=1e6 / n, target="<= 0.3",
    ))
    f100, j100 = chain(fnp, 100), chain(jnp, 100)
    fg, jg = fcore.grad(f100), jax.grad(j100)
    # Five calls per repetition, as for the eager chain: the first call after the harness's
    # gc.collect() also pays for refilling the interpreter's free lists.
    results.append(compare("eager grad(chain 100)", lambda: fg(x), lambda: jg(x),
                           number=5, repeats=7, scale=1e3, unit="ms", target="<= 0.065"))
    n = 1_000
    f_eqns = len(fcore.make_jaxpr(fcore.grad(chain(fnp, n)))(x).eqns) / n
    j_eqns = len(jax.make_jaxpr(jax.grad(chain(jnp, n)))(x).eqns) / n
    results.append(Result("eqns per chain op in make_jaxpr(grad(chain))", "eqns", f_eqns, j_eqns, "fcore <= 2.0"))
    fcore.grad(chain(fnp, 100_000))(x)  # must not hit recursion limits
    return results
