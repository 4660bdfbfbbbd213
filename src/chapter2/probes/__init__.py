"""Standalone scripts the pages run in a fresh interpreter: `python -m chapter2.probes.<name>`."""
