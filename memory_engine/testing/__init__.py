"""Reusable test suites for third-party parts (e.g. :mod:`.store_contract` for a new vector store)."""
