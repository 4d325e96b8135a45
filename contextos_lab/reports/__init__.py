"""Rendered outputs: executed notebooks as HTML reports whose hashes proposals record."""
