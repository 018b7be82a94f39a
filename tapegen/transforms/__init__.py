"""Program transforms: a Wengert list -> its adjoint (reverse mode) or tangent program (forward mode).

`activity` (with `invariance`) finds the values a derivative flows through,
`analysis` the static facts the reverse transform needs, `reverse` (with
`tape`) writes the forward pass and the backward pass, `forward` the tangent
program, `liveness` where each value dies, and `specialize` which recorded
shapes specialized code may trust. They read and write `ir` and may use the
frontend's `names`; codegen turns what they produce into text (see
docs/architecture.md). The user-facing transforms (`tg.jvp`, `tg.hessian`, ...)
are in api_transforms.py.
"""
