"""Imported by tests/test_cli.py to see when lazy_import runs a module."""

print("probe executed")
LOADED = True
