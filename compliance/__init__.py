"""Compliance: roles, audit exports and their verification, regulator reports."""
