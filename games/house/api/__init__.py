"""REST views and schemas of the house-banked tables (mounted by ``games.urls``)."""
