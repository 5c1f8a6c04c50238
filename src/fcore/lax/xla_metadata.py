"""``xla_metadata_value``: the identity that tags the op defining its operand with XLA
frontend attributes (``set_xla_metadata(x, **kw)``), as JAX's ``xla_metadata_value_p``.

Linear: its jvp tags the tangent too, its transpose passes the cotangent on untagged (JAX
tags individual values in the forward pass only).
"""

from __future__ import annotations

from typing import Any

import attrs

from fcore.backend.frontend_attributes import metadata_items, tag_defining_op
from fcore.backend.lowering import LoweringRuleContext, lowering_rules
from fcore.ir.avals import ShapedArray
from fcore.ir.params import ParamValue
from fcore.lax._primitive import Primitive
from fcore.transforms.ad_util import UndefinedPrimal
from fcore.transforms.batching import defvectorized
from fcore.transforms.jvp import deflinear
from fcore.transforms.transpose import transpose_rules

__all__ = ["xla_metadata_value", "xla_metadata_value_p"]

#: ``(key, value)`` pairs sorted by key, values as the user gave them (bool, int, float, str).
MetadataKVs = tuple[tuple[str, ParamValue], ...]


@attrs.frozen(kw_only=True)
class XlaMetadataParams:
    """``xla_metadata_value[xla_metadata_kvs]``: the attributes to attach."""

    xla_metadata_kvs: MetadataKVs


xla_metadata_value_p = Primitive("xla_metadata_value", params=XlaMetadataParams)


@xla_metadata_value_p.def_abstract_eval
def _abstract_eval(x: ShapedArray, *, xla_metadata_kvs: MetadataKVs) -> ShapedArray:
    return x


@xla_metadata_value_p.def_impl
def _impl(x: Any, *, xla_metadata_kvs: MetadataKVs) -> Any:
    return x


deflinear(xla_metadata_value_p)


@transpose_rules.register(xla_metadata_value_p)
def _transpose(ct: Any, x: UndefinedPrimal, *, xla_metadata_kvs: MetadataKVs) -> list[Any]:
    return [ct]


defvectorized(xla_metadata_value_p)


@lowering_rules.register(xla_metadata_value_p)
def _lowering(ctx: LoweringRuleContext, x: str, *, xla_metadata_kvs: MetadataKVs) -> str:
    tag_defining_op(ctx.fn, x, metadata_items(dict(xla_metadata_kvs)))
    return x


def xla_metadata_value(x: Any, kvs: MetadataKVs) -> Any:
    """``x``, its defining op tagged with ``kvs`` when lowered."""
    return xla_metadata_value_p.bind(x, xla_metadata_kvs=kvs)
