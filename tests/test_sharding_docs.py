"""docs/multi_device.md's examples run, in order, in one 4-device process."""

from __future__ import annotations

import pathlib
import re

from multidevice import run_script

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "multi_device.md"


def test_multi_device_page_runs() -> None:
    blocks = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    assert len(blocks) >= 6
    out = run_script("\n".join(blocks), num_devices=1)  # the page itself asks for 4 devices
    assert "P('x', 'y') False" in out
    assert "cpu:1 (slice(0, 4, None), slice(2, 4, None)) (4, 2)" in out
    assert "unbound axis name: x" in out
    assert "│CPU 0,2│CPU 1,3│" in out and "│CPU 0,1│CPU 2,3│" in out
    assert "[P(None, 'y'), P('y',), P()]" in out
