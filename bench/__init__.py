"""Performance benchmarks. Run them all with `python -m bench`; figures land in bench/RESULTS.md."""
