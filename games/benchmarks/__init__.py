"""Benchmarks of the games (``manage.py bench NAME``; registry in ``casino/bench.py``)."""
