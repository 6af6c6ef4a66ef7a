"""Ledger-side REST API: wallet, cashier, compliance exports and reports."""
