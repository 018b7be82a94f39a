"""The frontend: a Python function's source -> its Wengert list (`ir.Program`).

`source` finds and parses the function, `normalize` moves code after an exit
into the branch that does not exit, `resolve` resolves names, `lower` (with
`lower_expr`, `lower_flow` and `inline`) writes one primitive an equation,
and `names` makes every generated name. It imports only ir, verify, rules,
runtime and errors (see docs/architecture.md).
"""
