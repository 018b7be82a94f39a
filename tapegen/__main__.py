"""`python -m tapegen ...`: the command line (see `tapegen.cli`, or run with --help)."""
import sys

from .tools.cli import main

if __name__ == "__main__":
    sys.exit(main())
