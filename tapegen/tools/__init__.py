"""Tools built on the public API: the command line, export, inspection, gradient checking, Dask.

`cli` (`python -m tapegen`), `export` (a standalone gradient module),
`inspection` with `tracing` and `graphing` (`tg.residuals`, `tg.trace`,
`tg.graph`), `gradcheck` with `localize` (which rule is wrong), `selfcheck`
and `rules_listing` (`python -m tapegen check | rules`), and `dask`. They may
import every layer below, down to errors (see docs/architecture.md); nothing
below imports them. `tapegen.dask` and `tapegen.export`, the paths the docs
name, re-export tools.dask and tools.export.
"""
