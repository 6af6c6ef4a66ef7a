"""Realtime faces of the house-banked tables: the websocket consumer, the relay and the redacting presenters."""
