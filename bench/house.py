"""The shape of the code (issues 22 and 35), for a checkout: the largest product modules (none
should pass 400 lines but migrations), function-local imports of the project's own modules (each
left one says why), hand-written SQL outside models/queries (``text(...)`` calls and strings that
open a statement), statements built in ops/ (SQL builders called, ``.where``/``.exec``/``.execute``),
and op modules importing other op modules (beyond the shared ones). Each stage's spellings are
bench/stage_spellings.py's; import circles and the layering are tests (tests/unit/test_architecture.py).

    .venv/bin/python bench/house.py [CHECKOUT]

Prints one JSON object on stdout.
"""

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The suite's own definition, so that this figure and the check can never disagree.
from tests.unit.test_architecture import statements_built  # noqa: E402

PRODUCT = [
    *("api", "commands", "models", "ops", "pipelines", "providers"),
    *("schedules", "services", "ui", "workers"),
]
ELSEWHERE = ["sdk", "integrations"]  # product too, but SQL-free clients
OWN = {*PRODUCT, "cli", "loom"}
STATEMENT = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|WITH|LISTEN)\s")


def modules(root: Path) -> list[Path]:
    found = [p for d in PRODUCT + ELSEWHERE for p in (root / d).rglob("*.py") if "migrations" not in p.parts]
    return found + [p for p in (root / "cli.py",) if p.exists()]


def local_imports(tree: ast.AST) -> list[int]:
    lines = []
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else []
                )
                if any(name.split(".")[0] in OWN for name in names):
                    lines.append(node.lineno)
    return lines


def hand_written_sql(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        called = getattr(node, "func", None)
        if isinstance(node, ast.Call) and getattr(called, "id", getattr(called, "attr", None)) == "text":
            lines.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and STATEMENT.match(node.value):
            lines.append(node.lineno)
    return sorted(set(lines))


def op_modules(root: Path) -> set[str]:
    """The modules that hold ops: those whose handlers the registry's ``OPS`` table names; the rest
    of ops/ is what they share (schemas, the caller, errors, waiting, cursors, ...)."""
    tree = ast.parse((root / "ops" / "registry.py").read_text())
    table = next(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "OPS"
    )
    assert table is not None
    # Short names the registry gave modules (``read, write = conversation_read, conversation_write``).
    alias = {
        target.id: value.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for targets, values in [(node.targets[0], node.value)]
        for target, value in zip(
            getattr(targets, "elts", [targets]), getattr(values, "elts", [values]), strict=False
        )
        if isinstance(target, ast.Name) and isinstance(value, ast.Name)
    }
    return {alias.get(node.id, node.id) for node in ast.walk(table) if isinstance(node, ast.Name)}


def op_imports(tree: ast.AST, ops: set[str]) -> list[str]:
    """The op modules (of ``ops``) a module imports."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "ops":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ops."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("ops.")}
    return sorted(found & ops)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", nargs="?", type=Path, default=ROOT)
    root = parser.parse_args().checkout.resolve()
    sizes, imports, sql, built, ops_importing = [], {}, {}, {}, {}
    ops = op_modules(root)
    for path in modules(root):
        name = str(path.relative_to(root))
        source = path.read_text()
        tree = ast.parse(source)
        sizes.append((source.count("\n"), name))
        if lines := local_imports(tree):
            imports[name] = lines
        if not name.startswith(("models/queries", *ELSEWHERE)) and (lines := hand_written_sql(tree)):
            sql[name] = lines
        if name.startswith("ops/") and (lines := statements_built(source)):
            built[name] = lines
        if path.parent.name == "ops" and path.stem in ops and (others := op_imports(tree, ops)):
            ops_importing[name] = others
    sizes.sort(reverse=True)
    print(
        json.dumps(
            {
                "largest": sizes[:5],
                "over_400_lines": [s for s in sizes if s[0] > 400],
                "function_local_project_imports": imports,
                "hand_written_sql_outside_queries": sql,
                "in_ops": {name: lines for name, lines in sql.items() if name.startswith("ops/")},
                "statements_in_ops": sum(len(lines) for lines in built.values()),
                "statements_in_ops_by_module": built,
                "op_modules_importing_op_modules": ops_importing,
            }
        )
    )


if __name__ == "__main__":
    main()
