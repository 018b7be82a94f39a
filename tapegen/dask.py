"""`import tapegen.dask`: data-parallel gradients on Dask, the path docs/dask.md names (code: tools/dask.py)."""
from .tools.dask import *  # noqa: F401,F403
from .tools.dask import __all__  # noqa: F401
