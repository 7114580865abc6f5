"""Benchmarks (``make bench``): figures for the README, never asserted by tests."""
