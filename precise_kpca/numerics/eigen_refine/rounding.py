"""Rounding constants of the eigen refinement: each bounds a float64 (or double-double) rounding or sets one
decision of the iteration, with the reason beside it. Every factor is a power of two (or one plus one);
the guard bits of the returned values are counted here too.
"""
from __future__ import annotations

# A pair is clustered unless its first-order correction |F_ij / gap| is below 2**-26: a larger one would
# leave a second-order error above the 2**-53 relative accuracy of the float64 rotation of the cluster's block.
_CLUSTER_FACTOR = 2.0**26
_NORM_SAFETY = 1 + 2.0**-40  # covers float64 rounding in the Frobenius norms of the bounds
_EPS = 2.0**-52  # float64's machine epsilon (2u): one rounding of a sum or product of float64 read-outs
_SHORT_ROUNDING = 2.0**-50  # a few float64 roundings (a short expression of faithful read-outs), relative
_READOUT_SAFETY = 1 + 2.0**-48  # float64 read-outs are faithful (2 ulp); the c-scaling adds a few ulp
_SCALED_ROUNDING = 2.0**-47  # the read-outs and c-scaling (2**-48) plus one rounding of a difference of them
_GAP_ROUNDING = 2.0**-40  # a gap of float64 θ differences shrunk by this relative margin (far above its rounding)
_DD_PAIR = 2.0**-99  # the double-double rounding of two θ (2**-100 each) in a difference G_ii(θ_i - θ_j)
_DD_GAP = 2.0**-100  # the double-double rounding of a gap θ_(a-1) - θ_(a), relative to θ_(a)
_DD_ENDS = 2.0**-103  # a difference of double-double θ (or interval ends) misses by at most this of the θ involved
_WORDS_NEEDED = 2.0**-45  # a shifted block's float64 read-outs do if their rounding is this far below the block
_DIAGONAL_ENOUGH = 2.0**-10  # off-diagonal below this fraction of the target: no rotation (orthonormalisation)
_LINK_MARGIN = 2.0**-6  # pairs non-orthogonal beyond this of √(finest wanted / θ_max) / N are grouped
_NOISE_ROUNDINGS = 2.0**8  # eigenvalues within this many roundings of A's fixed point are noise
_NOISE_MARGIN = 2.0**24  # relative digits (tier 2) or vectors (tier 1) only this far above the noise floor
_OUT_GUARD_BITS = 16  # returned eigenvalues carry this many bits beyond the basis and A (their rounding is bounded)
