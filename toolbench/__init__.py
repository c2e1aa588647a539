"""toolbench: a workbench for an LLM agent's tool runtime."""
