"""The hand count of the NumPy Gram identity's traffic against the arrays NumPy really passes."""

import numpy as np

from chapter2.cases.distances import numpy_gram, numpy_gram_bytes


class Counted(np.ndarray):
    """An array that adds the bytes of every ufunc's array inputs and outputs to `moved`."""

    moved = 0

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [np.asarray(x).view(np.ndarray) if isinstance(x, Counted) else x for x in inputs]
        result = getattr(ufunc, method)(*plain, **kwargs)
        arrays = [x for x in plain if isinstance(x, np.ndarray)] + [np.asarray(result)]
        Counted.moved += sum(a.nbytes for a in arrays)
        return result.view(Counted) if isinstance(result, np.ndarray) else result


def test_hand_count_equals_the_passes_numpy_makes():
    N, M, d = 70, 90, 5
    rng = np.random.default_rng(0)
    X, Y = (rng.random(shape, dtype=np.float32).view(Counted) for shape in ((N, d), (M, d)))
    Counted.moved = 0
    numpy_gram(X, Y)
    assert Counted.moved == numpy_gram_bytes(N, M, d)
