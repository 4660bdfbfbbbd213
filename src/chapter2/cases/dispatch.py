"""Case study of the page `async-dispatch`: the operations that need values on the host, and
so wait for the computation that makes them."""

import numpy as np

# name -> an operation on a 2-D result that needs some of its values on the host
SYNCHRONIZING = {
    "r[0, 0].item()": lambda r: r[0, 0].item(),
    "float(r[0, 0])": lambda r: float(r[0, 0]),
    "np.asarray(r)": np.asarray,
    "if r[0, 0] > 0:": lambda r: bool(r[0, 0] > 0),
    "r[:2, :2].tolist()": lambda r: r[:2, :2].tolist(),
}
