"""What float32 can promise when two computations of one model differ only in the order of their sums
(the original's TF kernels against this package, one time loop against another, one machine's vector
units against another's): the package's absolute 1e-6, plus a few float32 ulps of the value itself,
which is what a sum of the same terms in another order can move a value near 3 by. An absolute bound
alone failed on a value of 2.85 on one CPU (AVX-512) and not on another."""

import numpy as np

ATOL = 1e-6
RTOL = 4 * float(np.finfo(np.float32).eps)


def assert_matches_reference(actual, expected, err_msg: str = "") -> None:
    """`actual` is `expected` within what float32 can promise (above)."""
    np.testing.assert_allclose(actual, expected, atol=ATOL, rtol=RTOL, err_msg=err_msg)
