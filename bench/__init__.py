"""Benchmarks (``make bench``): figures for the docs (docs/performance.md), never asserted by tests."""
