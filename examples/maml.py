"""MAML: a gradient through an inner gradient step (second-order meta-learning), as written.

The meta-objective takes one gradient step on a task's support set and
measures the loss on its query set; its gradient with respect to the initial
weights differentiates through that inner tg.grad, which tapegen inlines as
its own generated code. Checked against central finite differences.

Run: python examples/maml.py
"""
import numpy as np

import tapegen as tg


def task_loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def adapted_loss(w, xs, ys, xq, yq):
    w_task = w - 0.5 * tg.grad(task_loss)(w, xs, ys)   # one inner step
    return task_loss(w_task, xq, yq)


def sample_task(rng):
    true_w = rng.normal(size=3)
    x = rng.normal(size=(20, 3))
    y = np.tanh(x @ true_w)
    return x[:10], y[:10], x[10:], y[10:]


def main():
    rng = np.random.default_rng(0)
    w = np.zeros(3)
    meta_grad = tg.value_and_grad(adapted_loss)
    for step in range(40):
        tasks = [sample_task(rng) for _ in range(4)]
        values, grads = zip(*(meta_grad(w, *task) for task in tasks))
        w = w - 0.2 * np.mean(grads, axis=0)
        if step % 10 == 0:
            print(f"meta step {step:3d}  query loss after one inner step {np.mean(values):.4f}")
    print(tg.gradcheck(adapted_loss, w, *sample_task(rng)))


if __name__ == "__main__":
    main()
