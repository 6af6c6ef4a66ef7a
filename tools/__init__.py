"""Standalone tools that run without Django (a regulator's copy needs this folder and ledger/canonical.py)."""
