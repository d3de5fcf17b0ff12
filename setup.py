"""fairseq-hier's metadata, dependencies and commands live in pyproject.toml; this shim serves the
tools that still call setup.py."""
from setuptools import setup

setup()
