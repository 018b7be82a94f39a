"""The version of tapegen (the package and exported modules name it; pyproject.toml says it too)."""
__version__ = "0.1.0"
