"""Example tool sources that ship with toolbench (the notebooks and tests use them)."""
