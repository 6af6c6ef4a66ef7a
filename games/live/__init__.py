"""Live-table additions owned by the live API: table chat (its own app and migrations)."""
