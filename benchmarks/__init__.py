"""Benchmarks: each measures Spreadgate beside a baseline taken in the same run
and prints absolute figures and the ratio. `python -m benchmarks [--quick]`."""
