"""The sections of tests/run.py, one module each (tests/README.md)."""
