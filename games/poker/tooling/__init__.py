"""Test and comparison tooling, not production code: the PokerKit bridge and the
differential runner. Only ``manage.py poker_differential``, the poker benchmark
(whose bare peer is PokerKit) and the tests import it; no production module does
(``tests/test_architecture.py``)."""
