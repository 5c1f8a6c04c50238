"""fcore's intermediate representation: dtypes, abstract values, jaxprs."""
