"""Exact arithmetic, the bottom layer: fixed-point matrices of float64 digit slices (:mod:`.fixed`), their exact
products on float64 BLAS (:mod:`.ozaki`), exact dyadic matrices (:mod:`.dyadic`), balanced digits and carries
(:mod:`.integer_digits`), error-free transformations (:mod:`.eft`) and directed rounding (:mod:`.rounding`).

Nothing here imports from the layers above (``backends``, ``numerics``, ``certify``, ...); they import this.
"""
