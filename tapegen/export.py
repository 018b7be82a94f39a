"""`tapegen.export.export(f)`: a standalone gradient module, the path docs/security.md names (code: tools/export.py)."""
from .tools.export import export  # noqa: F401

__all__ = ["export"]
