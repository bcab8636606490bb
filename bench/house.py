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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = [
    *("api", "commands", "models", "ops", "pipelines", "providers"),
    *("schedules", "services", "ui", "workers"),
]
ELSEWHERE = ["sdk", "integrations"]  # product too, but SQL-free clients
OWN = {*PRODUCT, "cli", "loom"}
STATEMENT = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|WITH|LISTEN)\s")
# What builds or runs a statement: SQL builders called by name, and the query methods.
BUILDERS = {"select", "update", "delete", "insert", "text", "func", "col", "and_", "or_", "exists"}
RUNS = {"where", "exec", "execute", "scalar", "scalars", "get", "add", "add_all", "merge"}
# The ops' shared parts, which every op may import: the rest are ops of their own topic.
SHARED_OPS = {"caller", "errors", "limits", "schemas", "waiting", "registry"}


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


def statements(tree: ast.AST) -> list[int]:
    """Lines that build or run a statement: a SQL builder imported from SQLAlchemy or SQLModel and
    called, or a query method called on a session or a statement."""
    builders = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").split(".")[0] in {"sqlalchemy", "sqlmodel"}
        for alias in node.names
        if alias.name in BUILDERS
    }
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        if isinstance(called, ast.Name) and called.id in builders:
            lines.append(node.lineno)
        elif isinstance(called, ast.Attribute) and (
            called.attr in RUNS - {"get", "add"}
            or (called.attr in {"get", "add"} and getattr(called.value, "id", "") in {"session", "s", "db"})
        ):
            lines.append(node.lineno)
    return sorted(set(lines))


def op_imports(tree: ast.AST) -> list[str]:
    """The other op modules an op module imports, the shared ones aside."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "ops":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ops."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("ops.")}
    return sorted(found - SHARED_OPS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", nargs="?", type=Path, default=ROOT)
    root = parser.parse_args().checkout.resolve()
    sizes, imports, sql, built, ops_importing = [], {}, {}, {}, {}
    for path in modules(root):
        name = str(path.relative_to(root))
        source = path.read_text()
        tree = ast.parse(source)
        sizes.append((source.count("\n"), name))
        if lines := local_imports(tree):
            imports[name] = lines
        if not name.startswith(("models/queries", *ELSEWHERE)) and (lines := hand_written_sql(tree)):
            sql[name] = lines
        if name.startswith("ops/") and (lines := statements(tree)):
            built[name] = lines
        if name.startswith("ops/") and path.stem != "registry" and (others := op_imports(tree)):
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
