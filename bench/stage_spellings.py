"""How the stages are spelled in a checkout (issue 35 item 3's figure): each stage's stored name,
the modules of ``workers/stages/`` and ``schedules/`` (a stage's modules should share one name
with its work in ``pipelines/``), and, outside the migrations, the places that spell a stage
rather than take its declaration: the declaration itself, and SQL that quotes its name or its
subject prefix (``'title'``, ``'thread:'``). A stored name is also an ordinary word (a ``title``
key, the ``compaction`` pass), so plain strings equal to it are not counted.

    .venv/bin/python bench/stage_spellings.py [CHECKOUT]

Prints one JSON object on stdout.
"""

import argparse
import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = [
    "api",
    "commands",
    "models",
    "ops",
    "pipelines",
    "providers",
    "schedules",
    "services",
    "ui",
    "workers",
]
# A declaration as this layout writes it, Stage("name", "actor", "kind", ...), or as the one before
# it did, a module of workers/stages with STAGE = "name" and Stage(STAGE, ..., subject_kind="kind").
DECLARED = re.compile(r'Stage\(\s*"(\w+)",\s*"\w+",\s*"(\w+)"')
BEFORE = re.compile(r'^STAGE = "(\w+)"', re.MULTILINE)
BEFORE_KIND = re.compile(r'subject_kind="(\w+)"')


def sources(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text()
        for d in PRODUCT
        for p in sorted((root / d).rglob("*.py"))
        if "migrations" not in p.parts
    }


def quoted(tree: ast.AST, spellings: set[str]) -> list[int]:
    """Lines of string constants that quote one of ``spellings`` as SQL does."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if any(f"'{s}'" in node.value for s in spellings):
                lines.append(node.lineno)
    return sorted(set(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", nargs="?", type=Path, default=ROOT)
    root = parser.parse_args().checkout.resolve()
    code = sources(root)
    declarations = {}  # stored name: (the file declaring it, its subject kind)
    for path, source in code.items():
        if path == "models/stages.py":
            declarations |= {m.group(1): (path, m.group(2)) for m in DECLARED.finditer(source)}
        elif path.startswith("workers/stages/") and (m := BEFORE.search(source)):
            kind = BEFORE_KIND.search(source)
            declarations[m.group(1)] = (path, kind.group(1) if kind else m.group(1))
    spelled = {}
    for name, (home, kind) in sorted(declarations.items()):
        found = {
            path: lines
            for path, source in code.items()
            if (lines := quoted(ast.parse(source), {name, f"{kind}:"}))
        }
        spelled[name] = {"declared_in": home, "sql": found, "spellings": 1 + sum(map(len, found.values()))}
    print(
        json.dumps(
            {
                "workers/stages": sorted(p.stem for p in (root / "workers/stages").glob("*.py")),
                "schedules": sorted(p.stem for p in (root / "schedules").glob("*.py")),
                "stages": spelled,
            }
        )
    )


if __name__ == "__main__":
    main()
