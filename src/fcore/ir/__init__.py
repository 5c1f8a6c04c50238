"""fcore's intermediate representation: dtypes, abstract values, jaxprs."""

from fcore.ir.parser import parse_jaxpr as parse_jaxpr

__all__ = ["parse_jaxpr"]
