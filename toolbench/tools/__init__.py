"""The builtin tools, one module (or package) per namespace; `registry.py` lists them.

A tool module knows its `ToolContext` (the workspace, the frozen profile, the invocation's
`InvocationState`) and `ToolError`; never the runtime, the MCP manager or the widgets.
"""
