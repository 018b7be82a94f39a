"""A module of settings another module's functions read (tests/test_objects.py changes them between calls)."""
SCALE = 2.0
