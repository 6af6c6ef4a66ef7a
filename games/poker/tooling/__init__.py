"""Test and comparison tooling, not production code: the PokerKit bridge and the
differential runner (``manage.py poker_differential``, the engine tests). No
production module imports this package (``tests/test_architecture.py``)."""
