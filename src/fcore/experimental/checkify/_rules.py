"""Automatic checks and higher-order rules (filled in below)."""
