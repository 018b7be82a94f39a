"""Tools built on the public API: the command line, inspection, gradient checking.

`cli` (`python -m tapegen`), `inspection` with `tracing` and `graphing`
(`tg.residuals`, `tg.trace`, `tg.graph`), `gradcheck` with `localize` (which
rule is wrong), and `selfcheck` and `rules_listing` (`python -m tapegen
check | rules`). They may import every layer below, down to errors (see
docs/architecture.md); nothing below imports them.
"""
