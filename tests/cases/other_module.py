"""Data and helpers in a module other than the differentiated function's (python_functions.py)."""
import re

import numpy as np

SCALE = np.array([1.0, 2.0, 3.0])


def scale_from(spec):
    return float(re.match(r"scale=(.*)", spec).group(1))


def act(x, spec):
    """Calls a function of a module imported here (`re`), not where the differentiated function is."""
    return np.tanh(scale_from(spec) * x)
