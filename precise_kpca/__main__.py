"""``python -m precise_kpca``: the ``precise-kpca`` command line."""
import sys

from .cli import main

sys.exit(main())
