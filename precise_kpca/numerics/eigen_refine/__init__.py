"""Fast arbitrary-precision symmetric eigensystems by cluster-aware mixed-precision refinement.

Algorithm (Ogita & Aishima 2018, with the cluster treatment of Ogita & Aishima 2019):

1. ``X₀``: float64 LAPACK eigenvectors of ``A``, held as an exact fixed-point matrix
   (:class:`precise_kpca.arith.fixed.FixedMatrix`: float64 digit slices). ``A`` is read from its mpf
   entries once (:func:`.eigen_fixed.mpf_matrix_to_fixed`), or given as a ``FixedMatrix`` (e.g. the
   binary128 Gram's words through ``FixedMatrix.from_words``, no mpf objects), and stays a ``FixedMatrix``.
   An ``input_error`` (‖A_true − A‖₂) is added to the returned bounds only: the refinement targets A.
2. Each iteration forms ``P = AX``, ``S = XᵀP`` and ``G = XᵀX`` by Ozaki-scheme products on float64 BLAS
   (``ozaki.matmul(..., grid=)``: each rounded to the grid the step needs, its rounding recorded in the
   result's ``error_bound``), column panel by column panel of X and read out at once (float64 double words:
   no N×N fixed-point product is kept), the Rayleigh quotients ``θᵢ = Sᵢᵢ / Gᵢᵢ`` exactly from the digits
   (``Gᵢᵢ`` by exact column dots), and a float64 correction ``W``:

   - pairs ``(i, j)`` whose gap ``|θᵢ - θⱼ|`` is well above the coupling ``|Sᵢⱼ - θⱼRᵢⱼ|`` get the
     first-order Newton correction ``Eᵢⱼ = (Sᵢⱼ - θⱼRᵢⱼ) / (θⱼ - θᵢ)`` (quadratic convergence);
   - the rest are grouped into clusters: inside a cluster ``Eᵢⱼ = -Rᵢⱼ/2`` (orthogonalise), then the
     cluster is rotated by the float64 eigenvectors of its shifted, rescaled block ``(S - μG)_JJ``
     (to float64 relative accuracy: diagonal ``Gⱼⱼ(θⱼ - μ)`` from the double-double θ, off-diagonal from
     double-word read-outs when float64 ones would not do), plus what the Newton corrections of the
     columns outside the cluster add to that block at second order (:func:`.correction.outside_second_order`, the Schur
     term ``Σ_k T_ka T_kb / θ_k``: left out, it couples the cluster's levels again at ``T² / θ_k``).

   ``X ← X + X (W - I)`` is one more truncated product. On graded spectra (eigenvalue groups decades
   apart) each iteration resolves the next group, then converges quadratically.
3. Precision: ``X`` starts at 64 bits and its bits roughly double per iteration, never finer than the
   products can steer; tier 1 holds ``A`` at ``target + 2 log2 N + 8 + (top-k gap)`` bits and ``X`` at
   ``target + log2 N + gap`` bits; tier 2 uses all bits of ``A`` but, while a graded cluster is being peeled,
   products only to ``2**-(53+40)`` of the block just rotated.
4. Stopping and error bounds use the ``S, G`` of the basis (no extra product), see :func:`.bounds.bounds`:
   groups of the vectors not orthogonal to the target (a cluster rotated last) get Ostrowski + Weyl inside
   the group, and the same coupling ``T`` second order inside it (:func:`.bounds.group_second_order`: Weyl and Li–Li per
   member, remainder ``ω‖E‖ + O(ω²)|θ|``: a cluster rotated last, orthogonal only to 2**-53, no longer costs
   ``2**-53 |θ|``); across groups the non-orthogonality enters to first order as coupling
   ``T = E - (FΘ + ΘF)/2`` and to second order as ``φ² ‖S‖``; Weyl on ‖T‖ and the Li–Li quadratic block
   bound per separated group (coupling² / gap), intersected through sorted interval ends. Tier 1 thus
   stops once couplings are below ``√(target · gap)`` — 2 iterations on the benchmark Grams. Davis–Kahan's
   sin θ theorem bounds each eigenvector (or, for overlapping enclosures, its invariant subspace) by its
   residual over its gap; where that misses the target, the residual of one virtual Newton step
   ``x + X f`` (:func:`.bounds.newton_vector_bound`) gives a bound of about ``‖f‖``, the actual error, instead of
   ``‖r‖ / (smallest gap)``.

Modules, one per stage: :mod:`.driver` (the entry point, the input read to fixed point, the iteration),
:mod:`.products` (S, G and θ of a basis), :mod:`.correction` (W and the basis update), :mod:`.bounds` (eigenvalue
and eigenvector bounds: the theorems of :mod:`precise_kpca.numerics.theorems` in float64, with the safety factors of
:mod:`.rounding`), :mod:`.result` (the returned eigensystem), :mod:`.checkpoint` (saving and resuming);
:mod:`.rounding` names the rounding constants with their reasons, :mod:`.helpers` holds the exact and chunked
helpers the stages share.
"""
from __future__ import annotations

from .driver import input_bits, refine_eigensystem
from .result import RefinedEigensystem

__all__ = ["RefinedEigensystem", "input_bits", "refine_eigensystem"]
