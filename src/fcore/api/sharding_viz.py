"""``debug.visualize_sharding``: a 1-d or 2-d array's layout over devices, drawn as a table.

As JAX, the table is drawn by ``rich`` (imported when called, so fcore does not depend on it),
one cell per block of the array, labelled with the devices holding it and sized in proportion
to the block. Colours come from matplotlib's ``tab20b`` colour map unless a ``color_map`` is
given, and only where the console shows colour; without matplotlib there are none.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterator, Sequence
from typing import Union

import numpy as np

from fcore.sharding import Sharding

__all__ = ["ColorMap", "visualize_sharding"]

Color = Union[tuple[float, float, float], str]
#: A matplotlib-style colour map: a value in [0, 1] to RGBA.
ColorMap = Callable[[float], tuple[float, float, float, float]]


def _chunk_index(slc: slice) -> int:
    """Which block along its dimension ``slc`` is (0 for the whole dimension)."""
    if slc.start is None and slc.stop is None:
        return 0
    return int(slc.start // (slc.stop - slc.start))


def _canonicalize_color(color: Color) -> str:
    if isinstance(color, str):
        return color
    r, g, b = (int(a * 255) for a in color)
    return f"#{r:02X}{g:02X}{b:02X}"


def _get_text_color(color: str) -> str:
    """Black text on light cells, white on dark ones."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"


def _color_iter(color_map: ColorMap, num_rows: int, num_cols: int) -> Iterator[tuple[float, float, float, float]]:
    """Colours spread over the map, stepping half-way round so neighbouring cells differ."""
    num_colors = num_rows * num_cols
    values = np.linspace(0, 1, num_colors)
    idx = 0
    for _ in range(num_colors):
        yield color_map(float(values[idx]))
        idx = (idx + num_colors // 2 + bool(num_colors % 2 == 0)) % num_colors


def _default_color_map() -> ColorMap | None:
    try:
        mpl = importlib.import_module("matplotlib")
    except ModuleNotFoundError:
        return None
    cmap: ColorMap = mpl.colormaps["tab20b"]
    return cmap


def visualize_sharding(
    shape: Sequence[int], sharding: Sharding, *, use_color: bool = True, scale: float = 1.0,
    min_width: int = 9, max_width: int = 80, color_map: ColorMap | None = None,
) -> None:
    """Print how ``sharding`` lays out an array of ``shape`` (1 or 2 dimensions) over its
    devices (``jax.debug.visualize_sharding``)."""
    if not importlib.util.find_spec("rich"):
        raise ValueError("`visualize_sharding` requires `rich` to be installed.")
    import rich.align
    import rich.box
    import rich.console
    import rich.padding
    import rich.style
    import rich.table

    if len(shape) > 2 or len(shape) < 1:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    console = rich.console.Console(width=max_width)
    use_color = use_color and console.color_system is not None
    if use_color and not color_map:
        color_map = _default_color_map()
        use_color = color_map is not None

    base_height = int(10 * scale)
    aspect_ratio = (shape[1] if len(shape) == 2 else 1) / shape[0]
    base_width = int(base_height * aspect_ratio)
    height_to_width_ratio = 2.5
    device_kind = next(iter(sharding.device_set)).platform.upper()

    slices: dict[tuple[int, ...], set[int]] = {}
    heights: dict[tuple[int, ...], float | None] = {}
    widths: dict[tuple[int, ...], float] = {}
    for dev, slcs in sharding.devices_indices_map(tuple(shape)).items():
        chunk_idxs = tuple(_chunk_index(slc) for slc in slcs)
        if len(slcs) == 2:
            vert, horiz = slcs
            vert_size = vert.stop - vert.start if vert.stop is not None else shape[0]
            horiz_size = horiz.stop - horiz.start if horiz.stop is not None else shape[1]
            heights[chunk_idxs] = vert_size / shape[0]
            widths[chunk_idxs] = horiz_size / shape[1]
        else:  # one dimension: one row of height 1
            (horiz,) = slcs
            horiz_size = horiz.stop - horiz.start if horiz.stop is not None else shape[0]
            chunk_idxs = (0, *chunk_idxs)
            heights[chunk_idxs] = None
            widths[chunk_idxs] = horiz_size / shape[0]
        slices.setdefault(chunk_idxs, set()).add(dev.id)
    num_rows = max(a[0] for a in slices) + 1
    num_cols = max(a[1] for a in slices) + 1

    colors = _color_iter(color_map, num_rows, num_cols) if use_color and color_map is not None else None
    table = rich.table.Table(show_header=False, show_lines=not use_color, padding=0, highlight=not use_color,
                             pad_edge=False, box=rich.box.SQUARE if not use_color else None)
    for i in range(num_rows):
        row = []
        for j in range(num_cols):
            entry = f"{device_kind} " + ",".join(str(s) for s in sorted(slices[i, j]))
            maybe_height = heights[i, j]
            width = int(widths[i, j] * base_width * height_to_width_ratio)
            height = 1 if maybe_height is None else int(maybe_height * base_height)
            width = min(max(width, min_width), max_width)
            left, remainder = divmod(width - len(entry) - 2, 2)
            right = left + remainder
            top, remainder = divmod(height - 2, 2)
            bottom = top + remainder
            color: str | None = None
            text_color: str | None = None
            if colors is not None:
                color = _canonicalize_color(next(colors)[:3])
                text_color = _get_text_color(color)
                top, bottom, left, right = top + 1, bottom + 1, left + 1, right + 1
            padding = (max(top, 0), max(right, 0), max(bottom, 0), max(left, 0))
            row.append(rich.padding.Padding(
                rich.align.Align(entry, "center", vertical="middle"), padding,
                style=rich.style.Style(bgcolor=color, color=text_color)))
        table.add_row(*row)
    console.print(table, end="\n\n")
