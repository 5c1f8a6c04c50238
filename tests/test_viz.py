"""``fcore.viz.to_dot``: well-formed Graphviz text, one node per equation, clusters for nested jaxprs."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import fcore
import fcore.numpy as fnp
from fcore.core import ClosedJaxpr, Jaxpr, JaxprBuilder, Primitive, parse_jaxpr
from fcore.ir import dtypes
from fcore.ir.avals import shaped_array
from fcore.lax.elementwise import add_p, sin_p
from fcore.typing import ArrayLike
from fcore.viz import to_dot

X = np.ones((2, 3), np.float32)

_NODE = re.compile(r"^\s*(n\d+) \[label=")
_EDGE = re.compile(r"^\s*(n\d+) -> (n\d+)")


def _nested() -> ClosedJaxpr:
    inner = fcore.jit(lambda a: fnp.sin(a) * 2.0)

    def f(x: ArrayLike) -> tuple[fcore.Array, fcore.Array]:
        y = fcore.jit(lambda a: inner(a) + inner(a + 1.0))(x)
        return y, fnp.cos(x) + 1.0

    return fcore.make_jaxpr(f)(X)


def _check_well_formed(dot: str) -> tuple[set[str], list[tuple[str, str]]]:
    """Balanced braces and quotes, and every edge between declared nodes."""
    unquoted = re.sub(r'"(\\.|[^"\\])*"', '""', dot)
    assert unquoted.count("{") == unquoted.count("}")
    depth = 0
    for ch in unquoted:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert dot.startswith("digraph ") and dot.rstrip().endswith("}")
    nodes: set[str] = set()
    edges: list[tuple[str, str]] = []
    for line in dot.splitlines():
        if m := _NODE.match(line):
            assert m.group(1) not in nodes, f"node {m.group(1)} declared twice"
            nodes.add(m.group(1))
        elif m := _EDGE.match(line):
            edges.append((m.group(1), m.group(2)))
    for src, dst in edges:
        assert src in nodes and dst in nodes, (src, dst)
    return nodes, edges


def _eqn_count(jaxpr: Jaxpr) -> int:
    total = 0
    stack = [jaxpr]
    while stack:
        j = stack.pop()
        total += len(j.eqns)
        for e in j.eqns:
            for v in e.params.values():
                if isinstance(v, ClosedJaxpr):
                    stack.append(v.jaxpr)
    return total


def test_flat_jaxpr() -> None:
    closed = fcore.make_jaxpr(lambda x, y: (fnp.sin(x) * y + 2.0, x))(X, X)
    dot = to_dot(closed)
    nodes, edges = _check_well_formed(dot)
    # 2 inputs + 3 equations + 1 outputs node + 1 literal node
    assert len(nodes) == 2 + 3 + 1 + 1
    assert 'label="sin\\nc: f32[2,3]"' in dot
    assert dot.count('label="in ') == 2
    assert "2.0:f32[]" in dot
    assert "subgraph" not in dot
    # the uses: sin a; mul c b; add d 2.0; outputs (e, a)
    assert len(edges) == 1 + 2 + 2 + 2


def test_nested_jit_clusters() -> None:
    closed = _nested()
    dot = to_dot(closed, name="nested")
    nodes, edges = _check_well_formed(dot)
    # outer body, and the inner body drawn once per call site
    assert dot.count("subgraph cluster_") == 3
    assert len(set(re.findall(r"subgraph (cluster_\d+)", dot))) == 3
    assert dot.count("lhead=cluster_") == 3
    assert dot.count('label="jit: <lambda> (jaxpr)";') == 3
    eqn_nodes = [line for line in dot.splitlines() if "style=rounded]" in line]
    assert len(eqn_nodes) == _eqn_count(closed.jaxpr)


def test_tuples_of_jaxprs_are_clusters() -> None:
    """A cond-like primitive with a tuple of branch jaxprs: one cluster per branch, titled by index."""
    switch_p = Primitive("viz_test_switch", multiple_results=True, param_names=("branches", "label"))
    switch_p.def_abstract_eval(lambda i, x, *, branches, label: branches[0].out_avals)
    sin_branch = fcore.make_jaxpr(fnp.sin)(X)
    cos_branch = fcore.make_jaxpr(lambda x: fnp.cos(x) * 2.0)(X)
    b = JaxprBuilder()
    i = b.invar(shaped_array((), dtypes.int32))
    x = b.invar(shaped_array((2, 3), dtypes.float32))
    outs = b.eqn(switch_p, [i, x], branches=(sin_branch, cos_branch), label="pick")
    dot = to_dot(b.build(outs))
    _check_well_formed(dot)
    assert 'label="viz_test_switch (branches[0])";' in dot
    assert 'label="viz_test_switch (branches[1])";' in dot
    assert 'label="viz_test_switch\\nlabel=pick\\nc: f32[2,3]"' in dot


def test_params_are_summarised() -> None:
    closed = fcore.make_jaxpr(lambda x: fnp.sum(x.reshape(6)[1:5]) + x.T @ x)(X)
    dot = to_dot(closed)
    _check_well_formed(dot)
    assert "permutation=(1, 0)" in dot
    assert "new_sizes=(6,)" in dot
    assert all(len(part) <= 45 for part in re.findall(r"\\n([a-z_]+=[^\\\"]*)", dot))


def test_constants_and_literal_outputs() -> None:
    c = np.arange(6, dtype=np.float32).reshape(2, 3)
    closed = fcore.make_jaxpr(lambda x: (x * c, 1.5))(X)
    dot = to_dot(closed)
    _check_well_formed(dot)
    assert 'label="const a: f32[2,3]"' in dot
    assert "1.5:f32[]" in dot


def test_quotes_in_names_are_escaped() -> None:
    jaxpr = parse_jaxpr("{ lambda ; a:f32[]. let b:f32[] = jit[name='say \"hi\"' jaxpr={ lambda ; a:f32[]. let in (a,) }] a in (b,) }")
    dot = to_dot(jaxpr, name='a "quoted" name')
    _check_well_formed(dot)
    assert 'digraph "a \\"quoted\\" name"' in dot


def test_long_chain_is_iterative() -> None:
    b = JaxprBuilder()
    x = b.invar(shaped_array((), dtypes.float32))
    v = x
    for _ in range(20_000):
        (v,) = b.eqn(add_p, [v, x])
    (v,) = b.eqn(sin_p, [v])
    dot = to_dot(b.build([v]))
    assert dot.count("->") == 2 * 20_000 + 2


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot binary is not installed")
def test_graphviz_parses_it() -> None:
    for dot in (to_dot(_nested()), to_dot(fcore.make_jaxpr(lambda x: (x, 2.0))(X))):
        result = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stderr
        assert "<svg" in result.stdout
        assert "Warning" not in result.stderr, result.stderr
