"""Benchmarks (not tests): ``make bench`` runs every ``bench_*.py`` module's ``run()``."""
