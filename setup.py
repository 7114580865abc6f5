"""The optional C extension of the solver (domain/_sound.c, the sound stage's search); the rest is in pyproject.toml.

``optional=True``: where it cannot be built (no C compiler, as in python:3.11-slim) the install still
succeeds and ``domain.solver`` uses its Python search, which gives the same answers, only slower.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("domain._sound", sources=["domain/_sound.c"], optional=True)])
