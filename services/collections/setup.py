"""The compiled part of the package: the markdown event reader (see markdown/_reader.pyx).
Everything else is declared in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import setup

setup(ext_modules=cythonize(["src/cograph_collections/markdown/_reader.pyx"], quiet=True))
