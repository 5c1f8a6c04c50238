"""fcore on a CUDA GPU against jax on the same GPU: ``python -m benchmarks.gpu_check``.

CI has no GPU; this script is the GPU check a session with a lent GPU machine runs (through
jax's CUDA PJRT plugin, which fcore loads itself: ``fcore.backend.runtime``). Each case runs
under fcore and under jax, both on the GPU, in one process; the values, dtypes and shapes must
agree (matrix products at TF32-level tolerance, as both libraries use XLA's default precision).
Then a few workloads are timed on both sides (medians, fcore/jax). Prints one line per case,
and exits 1 when a case fails.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

os.environ.setdefault("FCORE_PLATFORM", "cuda")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402  (first: jax registers the CUDA plugin, which fcore's client then shares)
import numpy as np  # noqa: E402

import fcore  # noqa: E402

Case = Callable[[Any], Any]
R = np.random.default_rng(0)
A = R.standard_normal((64, 64)).astype(np.float32)
V = R.standard_normal(1000).astype(np.float32)
SPD = (A @ A.T + 64 * np.eye(64)).astype(np.float32)


def _mlp_loss(lib: Any) -> Callable[..., Any]:
    def loss(params: Any, x: Any, y: Any) -> Any:
        h = x
        for w, b in params[:-1]:
            h = lib.numpy.tanh(h @ w + b)
        w, b = params[-1]
        return lib.numpy.mean((h @ w + b - y) ** 2)

    return loss


PARAMS = [(R.standard_normal((32, 64)).astype(np.float32) * 0.1, np.zeros(64, np.float32)),
          (R.standard_normal((64, 8)).astype(np.float32) * 0.1, np.zeros(8, np.float32))]
X, Y = R.standard_normal((128, 32)).astype(np.float32), R.standard_normal((128, 8)).astype(np.float32)


def _scan(lib: Any) -> Any:
    return lib.lax.scan(lambda c, x: (c * 0.9 + x, c), np.float32(0), V[:100])


def _while(lib: Any) -> Any:
    return lib.lax.while_loop(lambda c: c[0] < 100, lambda c: (c[0] + 1, c[1] * 1.01), (0, np.float32(1)))


CONV_X = R.standard_normal((2, 3, 16, 16)).astype(np.float32)
CONV_K = R.standard_normal((4, 3, 3, 3)).astype(np.float32)


def _conv(lib: Any) -> Any:
    return lib.lax.conv_general_dilated(CONV_X, CONV_K, (1, 1), "SAME")


def _rebuild(lib: Any, a: np.ndarray[Any, Any], full: bool) -> Any:
    """``u @ diag(s) @ vh`` and ``s`` (singular vectors are unique only up to sign)."""
    u, s, vh = lib.numpy.linalg.svd(a, full_matrices=full)
    k = s.shape[0]
    return (u[:, :k] * s) @ vh[:k], s


CASES: dict[str, tuple[Case, float]] = {
    "eager elementwise": (lambda lib: lib.numpy.sin(V) * 2 + lib.numpy.exp(-V), 1e-5),
    "eager reductions": (lambda lib: (lib.numpy.sum(V), lib.numpy.max(V), lib.numpy.cumsum(V)), 1e-4),
    "jit elementwise": (lambda lib: lib.jit(lambda v: lib.numpy.tanh(v) ** 2 + v)(V), 1e-6),
    "jit matmul": (lambda lib: lib.jit(lambda a: a @ a.T)(A), 2e-2),
    "grad mlp": (lambda lib: lib.grad(_mlp_loss(lib))(PARAMS, X, Y), 2e-2),
    "jit(grad) mlp": (lambda lib: lib.jit(lib.grad(_mlp_loss(lib)))(PARAMS, X, Y), 2e-2),
    "vmap": (lambda lib: lib.vmap(lambda r: r @ A[0])(A), 2e-2),
    "jvp": (lambda lib: lib.jvp(lambda v: lib.numpy.sin(v) * v, (V,), (V,)), 1e-5),
    "scan": (_scan, 1e-5),
    "while_loop": (_while, 1e-5),
    "cond": (lambda lib: lib.jit(lambda v: lib.lax.cond(v.sum() > 0, lambda: v * 2, lambda: v - 1))(V), 1e-6),
    "random bits": (lambda lib: (lib.random.normal(lib.random.key(0), (100,)),
                                 lib.random.uniform(lib.random.key(1), (3, 5)),
                                 lib.random.randint(lib.random.key(2), (7,), 0, 10)), 1e-6),
    "conv": (_conv, 2e-2),
    "sort/top_k": (lambda lib: (lib.numpy.sort(V), lib.numpy.argsort(V), lib.lax.top_k(V, 5)), 0),
    "fft": (lambda lib: lib.numpy.fft.rfft(V), 1e-4),
    "gather/scatter": (lambda lib: lib.numpy.asarray(V).at[np.array([1, 5, 9])].add(1.0)[::7], 1e-6),
    "cholesky": (lambda lib: lib.numpy.linalg.cholesky(SPD), 1e-3),
    "solve": (lambda lib: lib.numpy.linalg.solve(SPD, A[:, :3]), 1e-3),
    "qr": (lambda lib: lib.numpy.abs(lib.numpy.linalg.qr(A)[1]), 1e-3),
    "eigh": (lambda lib: lib.numpy.linalg.eigh(SPD)[0], 1e-3),
    "svd": (lambda lib: lib.numpy.linalg.svd(A, compute_uv=False), 1e-3),
    "svd u s vh (reconstructed)": (lambda lib: [_rebuild(lib, a, full) for a in (A, A[:50, :40], A[:20, :10].T)
                                                for full in (True, False)], 1e-3),
    "lu": (lambda lib: lib.lax.linalg.lu(A), 1e-3),
    "qr complete, batched": (lambda lib: lib.numpy.abs(lib.numpy.linalg.qr(np.stack([A, A.T]), mode="complete")[1]), 1e-3),
    "eigh complex": (lambda lib: lib.numpy.linalg.eigvalsh(SPD + 1j * (A - A.T)), 1e-3),
    "inv/det": (lambda lib: (lib.numpy.linalg.inv(SPD), lib.numpy.linalg.slogdet(SPD)), 1e-3),
    "bf16 matmul": (lambda lib: lib.jit(lambda a: (a @ a).astype(np.float32))(A.astype(lib.numpy.bfloat16)), 2e-2),
    "device_put/get": (lambda lib: np.asarray(lib.device_put(V) + 1), 1e-6),
}


def _compare(ours: Any, theirs: Any, tol: float) -> None:
    a, b = fcore.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(a) == len(b), f"{len(a)} results, jax {len(b)}"
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype, f"{x.dtype}{x.shape} vs jax {y.dtype}{y.shape}"
        if tol == 0 or not np.issubdtype(x.dtype, np.inexact):
            np.testing.assert_array_equal(x, y)
        else:
            wide = np.complex128 if np.iscomplexobj(x) else np.float64
            np.testing.assert_allclose(x.astype(wide), y.astype(wide), rtol=tol, atol=tol)


def _median_time(fn: Callable[[], Any], n: int = 30) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _timings() -> None:
    def dispatch(lib: Any) -> Callable[[], Any]:
        f = lib.jit(lambda x, y: x * y + 1)
        x, y = lib.device_put(V), lib.device_put(V)
        return lambda: f(x, y).block_until_ready()

    def step(lib: Any) -> Callable[[], Any]:
        g = lib.jit(lib.grad(_mlp_loss(lib)))
        p = lib.device_put(PARAMS)
        return lambda: lib.block_until_ready(g(p, X, Y))

    def big_matmul(lib: Any) -> Callable[[], Any]:
        a = lib.device_put(np.ones((4096, 4096), lib.numpy.bfloat16))
        f = lib.jit(lambda a: a @ a)
        return lambda: f(a).block_until_ready()

    def eager_op(lib: Any) -> Callable[[], Any]:
        v = lib.device_put(V)
        return lambda: lib.numpy.sin(v).block_until_ready()

    for name, make in [("jit dispatch x*y+1", dispatch), ("jit(grad(mlp)) step", step),
                       ("bf16 4096^3 matmul", big_matmul), ("eager sin f32[1000]", eager_op)]:
        tf, tj = _median_time(make(fcore)), _median_time(make(jax))
        print(f"time {name:24s} fcore {tf * 1e6:10.1f} us  jax {tj * 1e6:10.1f} us  ratio {tf / tj:.2f}", flush=True)


if __name__ == "__main__":
    print("jax", jax.__version__, jax.devices(), flush=True)
    print("fcore platform:", fcore.default_backend(), fcore.devices(), flush=True)
    failed = 0
    for name, (case, tol) in CASES.items():
        try:
            _compare(case(fcore), case(jax), tol)
            print(f"ok   {name}", flush=True)
        except Exception as e:  # a disagreement or an error on fcore's side: report and go on
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {str(e)[:600]}", flush=True)
            traceback.print_exc(limit=4)
    print(f"{len(CASES) - failed} of {len(CASES)} cases agree", flush=True)
    if "--no-timings" not in sys.argv:
        _timings()
    sys.exit(1 if failed else 0)
