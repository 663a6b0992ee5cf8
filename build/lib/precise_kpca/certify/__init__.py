"""Rigorous certificates (PSD / Mercer certificates in :mod:`precise_kpca.certify.psd`)."""
