"""Answers every line with garbage on stdout: the handshake never completes."""

import sys

print("Starting server... (this is not JSON-RPC)", flush=True)
for _line in sys.stdin:
    print("<<garbage>> {not json", flush=True)
