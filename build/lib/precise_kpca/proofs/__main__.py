"""``python -m proofs [NAME ...]``: print the claim table; exit 1 if an asserted claim failed."""
from __future__ import annotations

import sys

from .registry import MODULES, report, run_all


def main(argv: list[str] | None = None) -> int:
    """Run the named proof modules (all by default); return the exit status."""
    names = sys.argv[1:] if argv is None else argv
    try:
        results = run_all(names or None)
    except ValueError as error:
        print(error, file=sys.stderr)
        print("modules: " + ", ".join(f"{k} ({v})" for k, v in MODULES.items()), file=sys.stderr)
        return 2
    return report(results)


if __name__ == "__main__":
    raise SystemExit(main())
