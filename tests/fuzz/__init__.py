"""Property-based fuzzing of the whole transform (a package, so its conftest does not shadow tests/conftest.py)."""
