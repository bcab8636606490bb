"""The house's shape, checked: layers point one way (the import-linter contracts in
pyproject.toml), no module imports another that imports it back, importing any module has no
side effect (no broker, engine, settings or thread built; nothing of LOOM_* needed), and ops write
no SQL."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [
    *("models", "providers", "services", "pipelines", "workers"),
    *("schedules", "ops", "api", "ui", "commands"),
]


def test_the_layers_point_one_way_and_pipelines_know_no_broker_nor_http():
    lint = subprocess.run(
        [Path(sys.executable).parent / "lint-imports", "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_one_that_imports_it_back():
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    assert circles(grimp.build_graph(*PACKAGES, cache_dir=None)) == []


IMPORT_EVERYTHING = """
import importlib, pkgutil, threading
import dramatiq.broker
from models import db
from models.settings import get_settings
for package in {packages!r}:
    for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
        if ".migrations" not in info.name:  # Alembic's scripts run inside Alembic
            importlib.import_module(info.name)
import cli
assert dramatiq.broker.global_broker is None, "a broker was built"
assert db.get_engine.cache_info().currsize == 0, "an engine was built"
assert get_settings.cache_info().currsize == 0, "the settings were read"
assert threading.active_count() == 1, threading.enumerate()
print("ok")
"""


def test_importing_every_module_needs_no_setting_and_builds_nothing():
    env = {name: value for name, value in os.environ.items() if not name.startswith("LOOM_")}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING.format(packages=PACKAGES)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


# A string that opens a SQL statement: such text belongs to models/queries.
STATEMENT = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|WITH|SET|LISTEN|COPY)\s")


def hand_written_sql(source: str) -> list[str]:
    """Where a module writes SQL itself: SQLAlchemy's ``text`` imported or called, a string (or an
    f-string) handed to ``execute``, or a string that reads as a statement."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
            found += [f"line {node.lineno}: imports text" for alias in node.names if alias.name == "text"]
        elif isinstance(node, ast.Call):
            called = node.func
            if (isinstance(called, ast.Name) and called.id == "text") or (
                isinstance(called, ast.Attribute)
                and called.attr == "text"
                and isinstance(called.value, ast.Name)
                and called.value.id in {"sqlalchemy", "sa"}
            ):
                found.append(f"line {node.lineno}: text(...)")
            elif (
                isinstance(called, ast.Attribute)
                and called.attr in {"execute", "executemany", "exec"}
                and node.args
                and isinstance(node.args[0], ast.Constant | ast.JoinedStr)
            ):
                found.append(f"line {node.lineno}: a string to .{called.attr}(...)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and STATEMENT.match(node.value):
            found.append(f"line {node.lineno}: {node.value.split()[0]} ...")
    return found


def test_hand_written_sql_is_caught():
    assert hand_written_sql("from sqlalchemy import text") == ["line 1: imports text"]
    assert hand_written_sql("import sqlalchemy\nsqlalchemy.text('x')") == ["line 2: text(...)"]
    assert hand_written_sql("conn.execute(f'VACUUM {table}')") == ["line 1: a string to .execute(...)"]
    assert hand_written_sql('Q = """\nSELECT 1\n"""') == ["line 1: SELECT ..."]
    assert hand_written_sql("s.exec(select(Turn))\ns.execute(queries.COPIES, {})") == []


def test_ops_call_pipelines_not_sql():
    """Hand-written SQL lives in models/queries, executed by name in pipelines (and workers); ops
    call pipelines (DESIGN.md, models/queries/__init__.py)."""
    ops = sorted((ROOT / "ops").rglob("*.py"))
    found = {str(path.relative_to(ROOT / "ops")): hand_written_sql(path.read_text()) for path in ops}
    assert found and {name: where for name, where in found.items() if where} == {}


BUILDERS = {"select", "insert", "update", "delete", "col", "func", "tuple_", "and_", "or_", "text"}
SESSION_CALLS = {"exec", "execute", "add", "add_all", "delete", "get", "flush", "rollback"}


def statements_built(source: str) -> list[str]:
    """Where a module builds or runs an ORM statement itself: a statement builder imported from
    SQLAlchemy or SQLModel, a ``.where(...)``, or a session's own call (``s.exec``, ``session.add``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in {
            "sqlalchemy",
            "sqlmodel",
        }:
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in BUILDERS]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            called = node.func
            if called.attr == "where":
                found.append(f"line {node.lineno}: .where(...)")
            elif (
                called.attr in SESSION_CALLS
                and isinstance(called.value, ast.Name)
                and called.value.id in {"s", "session"}
            ):
                found.append(f"line {node.lineno}: {called.value.id}.{called.attr}(...)")
    return found


def test_statements_built_are_caught():
    assert statements_built("from sqlmodel import col, select") == [
        "line 1: imports col",
        "line 1: imports select",
    ]
    assert statements_built("q = query.where(x)") == ["line 1: .where(...)"]
    assert statements_built("s.add(row)\nsession.exec(q)") == [
        "line 1: s.add(...)",
        "line 2: session.exec(...)",
    ]
    assert statements_built("from sqlmodel import Session\nmemory.pin(s, thread, now)") == []


def test_ops_build_no_statements():
    """An op validates, checks its caller, calls pipeline functions and builds its answer: the
    statements, and the rules, live in pipelines (issue 35)."""
    ops = sorted((ROOT / "ops").rglob("*.py"))
    found = {str(path.relative_to(ROOT / "ops")): statements_built(path.read_text()) for path in ops}
    assert found and {name: where for name, where in found.items() if where} == {}
