"""Serves normally, but outlives its stdin: only a signal stops it (for the exit-hook test)."""

import time

from _raw import echo_tool, serve, text

if __name__ == "__main__":
    serve([echo_tool()], lambda name, arguments: text(arguments.get("text", "")))
    time.sleep(3600)
