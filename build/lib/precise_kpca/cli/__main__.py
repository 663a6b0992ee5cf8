"""``python -m precise_kpca.cli``."""
import sys

from . import main

sys.exit(main())
