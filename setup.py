"""The one packaging rule pyproject.toml cannot say: the notebooks ship inside the package.

`notebooks/` stays where it is (pytest and nbval run it from the checkout); the wheel maps it to
the package `toolbench._notebooks` (package-dir and package-data in pyproject.toml), which
`toolbench lab` copies from. Packages are still discovered, so a new subpackage is never left out.
"""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["toolbench*"]), "toolbench._notebooks"])
