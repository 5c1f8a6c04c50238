"""Interleaved timing: fcore and jax alternate repetitions, medians are compared.

The machine is shared and noisy, so a ratio from one interleaved run is the figure of
merit; absolute times are printed for context only.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

import attrs


@attrs.frozen
class Result:
    name: str
    unit: str
    fcore: float
    jax: float
    target: str

    @property
    def ratio(self) -> float:
        return self.fcore / self.jax if self.jax else float("nan")

    def row(self) -> str:
        return f"{self.name:<48} {self.fcore:>12.2f} {self.jax:>12.2f} {self.unit:<10} {self.ratio:>7.3f}  {self.target}"


HEADER = f"{'workload':<48} {'fcore':>12} {'jax':>12} {'unit':<10} {'ratio':>7}  target"


def time_once(fn: Callable[[], object], number: int) -> float:
    """Seconds per call over ``number`` calls."""
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def compare(
    name: str,
    fcore_fn: Callable[[], object],
    jax_fn: Callable[[], object],
    *,
    number: int = 1,
    repeats: int = 7,
    scale: float = 1e6,
    unit: str = "us",
    target: str = "",
    warmup: bool = True,
) -> Result:
    """Median time per call (times ``scale``) of each, interleaving the repetitions."""
    if warmup:
        fcore_fn()
        jax_fn()
    f_times, j_times = [], []
    for _ in range(repeats):
        gc.collect()
        f_times.append(time_once(fcore_fn, number))
        gc.collect()
        j_times.append(time_once(jax_fn, number))
    return Result(name, unit, statistics.median(f_times) * scale, statistics.median(j_times) * scale, target)
