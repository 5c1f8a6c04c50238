"""Issue 11 workloads: a large jitted ``normal`` sample, and eager key splitting with a
small ``uniform`` draw (the loop of an eager training script)."""

from __future__ import annotations

from benchmarks.harness import Result, compare


def run() -> list[Result]:
    import jax

    import fcore
    import fcore.random as fr

    results = []
    fk, jk = fr.PRNGKey(0), jax.random.PRNGKey(0)
    f_normal = fcore.jit(lambda k: fr.normal(k, (2**20,)))
    j_normal = jax.jit(lambda k: jax.random.normal(k, (2**20,)))
    results.append(compare("jitted normal(key, (2**20,))", lambda: fcore.block_until_ready(f_normal(fk)),
                           lambda: j_normal(jk).block_until_ready(), number=10, repeats=9, scale=1e3, unit="ms",
                           target="<= 1.05"))

    f_state, j_state = [fk], [jk]

    def f_step() -> object:
        f_state[0], sub = fr.split(f_state[0])
        return fcore.block_until_ready(fr.uniform(sub, (3,)))

    def j_step() -> object:
        j_state[0], sub = jax.random.split(j_state[0])
        return jax.random.uniform(sub, (3,)).block_until_ready()

    results.append(compare("eager split + uniform(key, (3,))", f_step, j_step, number=200, target="<= 0.5"))

    f_typed, j_typed = [fr.key(0)], [jax.random.key(0)]

    def f_typed_step() -> object:
        f_typed[0], sub = fr.split(f_typed[0])
        return fcore.block_until_ready(fr.uniform(sub, (3,)))

    def j_typed_step() -> object:
        j_typed[0], sub = jax.random.split(j_typed[0])
        return jax.random.uniform(sub, (3,)).block_until_ready()

    results.append(compare("eager split + uniform, typed keys", f_typed_step, j_typed_step, number=200,
                           target="<= 0.5"))
    return results
