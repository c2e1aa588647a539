"""toolbench's benchmarks: one script per question, each printing a table and writing JSON.

`python -m benchmarks` runs them all (`--smoke` for the small sizes CI uses); one runs alone as
`python -m benchmarks.bench_search`. Results go to `benchmarks/results/<name>.json` (git-ignored).
"""
