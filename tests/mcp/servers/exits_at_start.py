"""Writes a reason on stderr and exits before the handshake."""

import sys

sys.stderr.write("fatal: the demo configuration file is missing\n")
sys.exit(3)
