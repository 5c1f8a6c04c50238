"""The one compiled part of fcore: jit's cached call (src/fcore/_fastjit.c). Optional: where it
cannot be built, ``fcore.api.jit`` runs the same path in Python."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("fcore._fastjit", ["src/fcore/_fastjit.c"], optional=True)])
