"""Never reads stdin nor answers: a server stuck during initialisation (SIGTERM still kills it)."""

import time

time.sleep(3600)
