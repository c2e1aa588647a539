"""The record-file writer under threads: every queued file is written once, flushes and close
never wait on a writer that is gone. Each case runs in a child with a deadline (a lost wake-up
would hang)."""

from __future__ import annotations

from pathlib import Path

from tests.deadline import run_with_deadline

STRESS = r"""
import os, sys, threading
from pathlib import Path
from toolbench.runtime.store import Store

root = Path(sys.argv[1])
store = Store(root)

def writer(t):
    for i in range(500):
        store.write_later(f"out/{t}/{i}.json", {"t": t, "i": i})
        if i % 97 == 0:
            store.flush()

threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
for th in threads: th.start()
for th in threads: th.join()
store.flush()
written = sum(len(os.listdir(root / "out" / str(t))) for t in range(4))
store.close()
report([written, store._pending])
"""

AFTER_CLOSE = r"""
import sys, threading, time
from pathlib import Path
from toolbench.runtime.store import Store

store = Store(Path(sys.argv[1]))
store.write_later("a/1.json", 1)
# A call that ends as its bench closes: its write lands while close waits for the writer.
join = threading.Thread.join
def late_join(self, timeout=None):
    store.write_later("a/2.json", 2)
    return join(self, timeout)
threading.Thread.join = late_join
store.close()
threading.Thread.join = join
store.write_later("a/3.json", 3)  # after close: nothing queued (the run log holds the record)
started = time.monotonic()
store.flush()
report([sorted(p.name for p in (Path(sys.argv[1]) / "a").iterdir()), store._pending, time.monotonic() - started < 5])
"""


def test_four_threads_with_flushes_write_every_file_once(tmp_path: Path) -> None:
    assert run_with_deadline(STRESS, args=(str(tmp_path),), deadline=60) == [2000, 0]


def test_a_write_that_lands_while_the_store_closes_strands_nothing(tmp_path: Path) -> None:
    # It used to start no writer: the next flush waited 60 s and blamed a stalled disk.
    assert run_with_deadline(AFTER_CLOSE, args=(str(tmp_path),), deadline=60) == [["1.json"], 0, True]
