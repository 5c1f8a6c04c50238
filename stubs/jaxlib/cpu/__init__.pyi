"""jaxlib.cpu: the CPU kernel extension modules (only what fcore.backend uses)."""
