"""Issue 14 workloads: jitted Cholesky + solve + slogdet of a 256x256 SPD matrix (the
Gaussian-process step), and a jitted batch of FFTs.

fcore and jax call the same LAPACK kernels (OpenBLAS, through SciPy). On a loaded machine its
worker threads spin and the timings swing tenfold; run with ``OPENBLAS_NUM_THREADS=1`` for a
stable ratio."""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Result, compare


def run() -> list[Result]:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    import fcore
    import fcore.numpy as fnp
    import fcore.scipy.linalg as fsl

    rng = np.random.default_rng(0)
    a = rng.normal(size=(256, 256)).astype(np.float32)
    spd = a @ a.T + 256 * np.eye(256, dtype=np.float32)
    b = rng.normal(size=(256, 8)).astype(np.float32)

    def f_gp(m: fcore.Array, rhs: fcore.Array) -> tuple[fcore.Array, fcore.Array, fcore.Array]:
        c = fsl.cho_factor(m, lower=True)
        return fsl.cho_solve(c, rhs), fnp.linalg.solve(m, rhs), fnp.linalg.slogdet(m).logabsdet

    def j_gp(m: jax.Array, rhs: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        c = jsl.cho_factor(m, lower=True)
        return jsl.cho_solve(c, rhs), jnp.linalg.solve(m, rhs), jnp.linalg.slogdet(m).logabsdet

    fj, jj = fcore.jit(f_gp), jax.jit(j_gp)
    fs, fb, js, jb = fcore.device_put(spd), fcore.device_put(b), jax.device_put(spd), jax.device_put(b)
    results = [compare("jitted cholesky + solve + slogdet, 256x256", lambda: fcore.block_until_ready(fj(fs, fb)),
                       lambda: [v.block_until_ready() for v in jj(js, jb)], number=20, repeats=9, target="<= 1.05")]

    x = rng.normal(size=(64, 1024)).astype(np.float32)
    f_fft = fcore.jit(lambda v: fnp.fft.irfft(fnp.fft.rfft(v) * 0.5, n=1024))
    j_fft = jax.jit(lambda v: jnp.fft.irfft(jnp.fft.rfft(v) * 0.5, n=1024))
    fx, jx = fcore.device_put(x), jax.device_put(x)
    results.append(compare("jitted rfft + irfft, 64x1024", lambda: fcore.block_until_ready(f_fft(fx)),
                           lambda: j_fft(jx).block_until_ready(), number=50, repeats=9, target="<= 1.05"))
    return results
