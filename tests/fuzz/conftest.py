"""`--fuzz-long`: run thousands of fuzzed programs instead of a few hundred.

The option is registered when pytest starts in this folder
(`pytest tests/fuzz --fuzz-long`); from the repository root, where pytest
reads this file only while collecting, set TAPEGEN_FUZZ_LONG=1 instead.
"""
import os


def pytest_addoption(parser):
    parser.addoption("--fuzz-long", action="store_true", default=False,
                     help="fuzz thousands of random programs (tests/fuzz) instead of a few hundred")


def fuzz_long(config) -> bool:
    return bool(config.getoption("--fuzz-long", default=False)) or os.environ.get("TAPEGEN_FUZZ_LONG") == "1"


LONG = False  # set from the command line before the test modules here are imported


def pytest_configure(config):
    global LONG
    LONG = fuzz_long(config)
