"""The house rules of issue 23, read from the source with ``ast``: no module over 600 lines, no function over 80
lines (outside :data:`ALLOWED`, documented translations of a published algorithm), and no module importing a layer
above its own (the layer table of CONTRIBUTING.md, lazy imports included).
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "precise_kpca"
MODULE_LIMIT = 600
FUNCTION_LIMIT = 80

ALLOWED: dict[tuple[str, str], str] = {}
"""(module path, qualified function name) → why it may exceed :data:`FUNCTION_LIMIT`: only a documented line-by-line
translation of a published algorithm, whose steps read best beside the paper's. None today."""

@lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _modules(package: Path) -> list[Path]:
    return sorted(package.rglob("*.py"))


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _functions(tree: ast.Module):
    """Every function and method, nested ones included, as (qualified name, first line, lines from ``def`` to its
    last line)."""
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                found.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, f"{name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def oversized(root: Path, skip=frozenset()) -> list[str]:
    """One line per module over :data:`MODULE_LIMIT` lines or function over :data:`FUNCTION_LIMIT` lines under
    ``root/precise_kpca``, naming the file, the function and its length; ``skip`` holds (path, name or None)."""
    problems = []
    for path in _modules(root / "precise_kpca"):
        shown = _relative(path, root)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MODULE_LIMIT and (shown, None) not in skip:
            problems.append(f"{shown}: module of {lines} lines (limit {MODULE_LIMIT}): split it by concern")
        for name, first, length in _functions(_tree(path)):
            if length > FUNCTION_LIMIT and (shown, name) not in skip:
                problems.append(f"{shown}:{first} {name}: function of {length} lines (limit {FUNCTION_LIMIT}): "
                                "split it into named steps")
    return problems


def _length(root: Path, shown: str, name: str | None) -> int:
    """Lines of the module ``shown`` (``name`` None) or of its function ``name``; 0 when it no longer exists."""
    path = root / shown
    if not path.is_file():
        return 0
    if name is None:
        return len(path.read_text(encoding="utf-8").splitlines())
    return max((length for qualified, _, length in _functions(_tree(path)) if qualified == name), default=0)


def layers(contributing: Path) -> list[tuple[str, list[str]]]:
    """The rows of CONTRIBUTING.md's layout table, lowest layer first: (layer, the ``precise_kpca/`` paths of its
    package column)."""
    text = contributing.read_text(encoding="utf-8")
    table = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "---"):
            continue
        rows.append((cells[0], [p for p in re.findall(r"`([^`]+)`", cells[1]) if p.startswith("precise_kpca/")]))
    return rows


def _layer_of(shown: str, rows) -> tuple[int, str] | None:
    """(rank, layer) of the module at ``shown``: the row whose path is the longest prefix of it."""
    matches = [(len(p), rank, layer) for rank, (layer, paths) in enumerate(rows) for p in paths
               if shown == p or (p.endswith("/") and shown.startswith(p))]
    return max(matches)[1:] if matches else None


def _imported_modules(path: Path, root: Path) -> set[str]:
    """The ``precise_kpca`` modules (as paths under ``root``) that ``path`` imports anywhere in its text: a name
    imported from a package is its submodule where one exists, else the package's ``__init__``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    package = parts[:-1]
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            bases = [(a.name.split("."), []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            bases = [(base + (node.module.split(".") if node.module else []), [a.name for a in node.names])]
        else:
            continue
        for base, names in bases:
            if base[:1] != ["precise_kpca"]:
                continue
            for name in names or [None]:
                candidates = [base + [name]] if name else []
                candidates.append(base)
                for candidate in candidates:
                    target = next((t for t in (root.joinpath(*candidate).with_suffix(".py"),
                                               root.joinpath(*candidate, "__init__.py")) if t.is_file()), None)
                    if target is not None:
                        found.add(_relative(target, root))
                        break
    return found


def layer_violations(root: Path) -> list[str]:
    """One line per module under ``root/precise_kpca`` outside the layout table, and per import of a layer below
    it in the table (a higher layer); an ``(apart)`` layer imports no other layer and any layer may import it."""
    rows = layers(root / "CONTRIBUTING.md")
    problems = []
    for path in _modules(root / "precise_kpca"):
        shown = _relative(path, root)
        own = _layer_of(shown, rows)
        if own is None:
            problems.append(f"{shown}: in no row of CONTRIBUTING.md's layout table")
            continue
        for target in sorted(_imported_modules(path, root)):
            other = _layer_of(target, rows)
            if other is None or other[1] == own[1] or "(apart)" in other[1]:
                continue
            if "(apart)" in own[1]:
                problems.append(f"{shown} (layer {own[1]}) imports {target} (layer {other[1]}): it stands apart")
            elif other[0] > own[0]:
                problems.append(f"{shown} (layer {own[1]}) imports {target} (layer {other[1]}), above its own")
    return problems


def test_no_module_or_function_over_its_limit():
    problems = oversized(ROOT, skip=frozenset(ALLOWED))
    assert not problems, "\n".join(problems)


def test_allowed_entries_are_still_needed():
    stale = [f"{shown} {name}: {_length(ROOT, shown, name)} lines, within {FUNCTION_LIMIT}: drop it from ALLOWED"
             for shown, name in ALLOWED if _length(ROOT, shown, name) <= FUNCTION_LIMIT]
    assert not stale, "\n".join(stale)


def test_no_module_imports_a_layer_above_its_own():
    problems = layer_violations(ROOT)
    assert not problems, "\n".join(problems)


def _toy_house(tmp_path: Path, layout: str, modules: dict[str, str]) -> Path:
    (tmp_path / "CONTRIBUTING.md").write_text(f"## Layout\n\n| layer | package | concern |\n| --- | --- | --- |\n"
                                              f"{layout}\n## Next\n", encoding="utf-8")
    for shown, text in modules.items():
        path = tmp_path / shown
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


LAYOUT = ("| low | `precise_kpca/low/`, `precise_kpca/__init__.py` | x |\n| high | `precise_kpca/high/` | y |\n"
          "| data (apart) | `precise_kpca/data/` | z |\n")


def test_layer_check_names_an_upward_import(tmp_path):
    """Mutation check: a lazy upward import, and a module of the apart layer importing another layer, are named."""
    root = _toy_house(tmp_path, LAYOUT, {
        "precise_kpca/__init__.py": "", "precise_kpca/low/__init__.py": "", "precise_kpca/high/__init__.py": "",
        "precise_kpca/data/__init__.py": "", "precise_kpca/high/b.py": "from ..low import a\nfrom ..data import c\n",
        "precise_kpca/low/a.py": "def f():\n    from ..high.b import g\n",
        "precise_kpca/data/c.py": "from precise_kpca.low import a\n",
        "precise_kpca/stray.py": "",
    })
    problems = layer_violations(root)
    assert problems == [
        "precise_kpca/data/c.py (layer data (apart)) imports precise_kpca/low/a.py (layer low): it stands apart",
        "precise_kpca/low/a.py (layer low) imports precise_kpca/high/b.py (layer high), above its own",
        "precise_kpca/stray.py: in no row of CONTRIBUTING.md's layout table",
    ]


def test_size_check_names_file_function_and_length(tmp_path):
    """Mutation check: a method one line over the limit and a module one line over are named with their lengths;
    the limits themselves pass."""
    body = "\n".join(["    x = 0"] * (FUNCTION_LIMIT - 1))  # fits() is exactly at the limit
    method = f"class C:\n    def long(self):\n        '''doc'''\n{body.replace('    x', '        x')}\n"
    root = _toy_house(tmp_path, LAYOUT, {
        "precise_kpca/low/a.py": f"def fits():\n{body}\n" + method,
        "precise_kpca/low/b.py": "\n" * MODULE_LIMIT + "y = 1\n",
        "precise_kpca/low/c.py": "\n" * (MODULE_LIMIT - 1) + "y = 1\n",
    })
    assert oversized(root) == [
        f"precise_kpca/low/a.py:{FUNCTION_LIMIT + 2} C.long: function of {FUNCTION_LIMIT + 1} lines "
        f"(limit {FUNCTION_LIMIT}): split it into named steps",
        f"precise_kpca/low/b.py: module of {MODULE_LIMIT + 1} lines (limit {MODULE_LIMIT}): split it by concern",
    ]
    assert oversized(root, skip={("precise_kpca/low/a.py", "C.long"), ("precise_kpca/low/b.py", None)}) == []
