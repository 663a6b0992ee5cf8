"""Kernel approximations: random Fourier features, Nyström and random-feature KPCA, large-σ studies."""
