"""The house rules of the package and the workflow, read from the code itself (ast and text),
so that the layout stays what the README says:

- ``phenomt.core`` imports nothing of a wing or of the plan;
- a wing (``ldd``, ``nat``, ``lexcons``, ``systems``) imports ``core`` and itself only;
- nothing below the plan imports it (only the workflow, and the CLI where it must);
- metrics are computed in ``core/metrics`` only (their libraries are imported nowhere else);
- the fairseq plugins load without pandas, scipy or any wing;
- defaults live in the schema: no ``.get(key, default)`` in the plan, no dictionary lookups
  or ``.get`` in the rules;
- one fairseq-preprocess command, one workflow entry point.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "src" / "phenomt"
WINGS = ("ldd", "nat", "lexcons", "systems")
RULES = sorted((ROOT / "workflow" / "rules").glob("*.smk"))


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py")) if folder.is_dir() else []


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:`` (imports for annotations only)."""
    skipped = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
               and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
               for stmt in block.body for n in ast.walk(stmt)}
    return [n for n in ast.walk(tree) if id(n) not in skipped]


def _imports(path: Path) -> set[str]:
    """Every phenomt module a file imports at run time, at top level or inside functions."""
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("phenomt"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                node.module.startswith("phenomt")):
            found.add(node.module)
            # `from phenomt.core import align` imports phenomt.core.align
            found.update(f"{node.module}.{a.name}" for a in node.names
                         if (PACKAGE.parent / node.module.replace(".", "/") / a.name).exists()
                         or (PACKAGE.parent / f"{node.module.replace('.', '/')}/{a.name}.py")
                         .exists())
    return found


def _part(module: str) -> str:
    """``phenomt.ldd.sets`` → ``ldd``; ``phenomt.cli`` → ``cli``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("path", _modules(PACKAGE / "core"), ids=lambda p: p.name)
def test_core_imports_only_core(path):
    outside = {m for m in _imports(path) if _part(m) not in ("core", "")}
    assert not outside, f"{path.relative_to(ROOT)} imports {sorted(outside)}"


@pytest.mark.parametrize("path", [p for w in WINGS for p in _modules(PACKAGE / w)],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_wing_imports_core_and_itself_only(path):
    wing = path.relative_to(PACKAGE).parts[0]
    outside = {m for m in _imports(path) if _part(m) not in ("core", wing, "")}
    assert not outside, f"{path.relative_to(ROOT)} imports {sorted(outside)}"


def test_nothing_below_the_plan_imports_it():
    """Only the command-line layer (cli and the evaluate package) may."""
    below = [p for p in _modules(PACKAGE) if len(p.relative_to(PACKAGE).parts) > 1
             and p.relative_to(PACKAGE).parts[0] not in ("plan", "evaluate")]
    importers = [p for p in below if any(_part(m) == "plan" for m in _imports(p))]
    assert not importers, [str(p.relative_to(ROOT)) for p in importers]


def test_no_module_reaches_up_to_the_command_line():
    """Not even for a type: the command tree lives in core (core/cliargs.py)."""
    below = [p for p in _modules(PACKAGE) if len(p.relative_to(PACKAGE).parts) > 1]
    reaching = [str(p.relative_to(ROOT)) for p in below
                if re.search(r"^\s*from phenomt\.cli import|^\s*import phenomt\.cli",
                             p.read_text(encoding="utf-8"), re.MULTILINE)]
    assert not reaching


#: Libraries that compute a metric; only ``core/metrics`` may import them (sacreBLEU's own
#: paired tests included: every interval and test comes from the one resampling module).
METRIC_LIBRARIES = ("sacrebleu", "nltk")


def _library_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_metrics_only_through_the_registry():
    """A metric is computed in core/metrics only: nothing else imports a metric library."""
    metrics = PACKAGE / "core" / "metrics"
    offenders = {str(p.relative_to(ROOT)): sorted(m) for p in _modules(PACKAGE)
                 if metrics not in p.parents
                 and (m := {name for name in _library_imports(p)
                            if name.split(".")[0] in METRIC_LIBRARIES})}
    assert not offenders


#: What draws resamples or computes a test's p-value; only the one resampling module
#: (``core/metrics/resample.py``) may call them.
RESAMPLING_CALLS = ("default_rng", "random.choice", "random.randint", "multinomial",
                    "ttest_rel", "ttest_ind", "ttest_1samp", "permutation_test", "bootstrap(",
                    "wilcoxon", "PairedTest", "paired_bs", "paired_ar")
def test_every_interval_and_test_comes_from_the_one_resampling_module():
    """Walks every module: none but core/metrics/resample.py draws resamples or computes a
    p-value itself (a table's interval or test from elsewhere would be a second path)."""
    engine = PACKAGE / "core" / "metrics" / "resample.py"
    offenders = {}
    for path in _modules(PACKAGE):
        rel = str(path.relative_to(PACKAGE))
        if path == engine:
            continue
        text = path.read_text(encoding="utf-8")
        # a call of the engine itself (resample.bootstrap(...)) is what every module should do
        text = re.sub(r"\bresample\.\w+", "", text)
        found = [call for call in RESAMPLING_CALLS
                 if re.search(rf"(?<![\w]){re.escape(call)}", text)]
        if found:
            offenders[rel] = found
    assert not offenders, offenders


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_cycle_between_modules():
    """Run-time imports (function-level ones too) form no cycle: a cycle means two modules
    share something that belongs below both."""
    graph = {_module_name(p): {m for m in _imports(p)} for p in _modules(PACKAGE)}
    graph = {name: {m for m in deps if m in graph and m != name} for name, deps in graph.items()}
    # a package's __init__ importing its own modules is not a cycle with them
    cycles, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for dep in sorted(graph[node]):
            if state.get(dep) == "open":
                cycles.append(trail[trail.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, trail + [dep])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, cycles


PROBE = """
import json, sys
before = set(sys.modules)
{setup}
after_setup = set(sys.modules)
import phenomt.fairseq_ext
new = set(sys.modules) - after_setup
heavy = sorted({{m.split(".")[0] for m in new}} & {{"pandas", "scipy"}})
ours = sorted(m for m in sys.modules if m.startswith("phenomt.")
              and m.split(".")[1] not in ("fairseq_ext", "core"))
print(json.dumps({{"heavy": heavy, "ours": ours}}))
"""


def test_fairseq_plugins_load_without_pandas_scipy_or_a_wing():
    """fairseq itself may import pandas and scipy; the plugins must add neither, nor any wing
    or the plan: only light modules of ``phenomt.core``."""
    setup = "import fairseq, fairseq.models, fairseq.tasks, fairseq.criterions"
    result = subprocess.run([sys.executable, "-c", PROBE.format(setup=setup)],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    if "No module named 'fairseq'" in result.stderr:
        pytest.skip("fairseq is not installed")
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == {"heavy": [], "ours": []}


def test_the_core_modules_the_plugins_use_are_light():
    """Without fairseq: the phenomt modules the plugins import pull in no pandas or scipy."""
    used = sorted({m for p in _modules(PACKAGE / "fairseq_ext") for m in _imports(p)
                   if not m.startswith("phenomt.fairseq_ext")})
    code = ("import sys\n" + "".join(f"import {m}\n" for m in used)
            + "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'scipy'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]", (used, result.stdout)


def _plan_gets_with_default() -> list[str]:
    found = []
    for path in _modules(PACKAGE / "plan"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get" and len(node.args) == 2):
                found.append(f"{path.name}:{node.lineno}")
    return found


def test_defaults_live_in_the_schema_not_in_the_plan():
    assert not _plan_gets_with_default()


@pytest.mark.parametrize("path", [*RULES, ROOT / "workflow" / "Snakefile"], ids=lambda p: p.name)
def test_rules_ask_the_plan_and_never_look_into_the_config(path):
    text = path.read_text(encoding="utf-8")
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert ".get(" not in code, f"{path.name} reads the config with .get"
    assert not re.search(r"\bconfig\[", code), f"{path.name} indexes the config"
    assert not re.search(r"PLAN\.[\w.]*(\([^()]*\))?\[", code), (
        f"{path.name} looks into a dictionary of the plan")


def test_one_fairseq_preprocess_command():
    """Only ``phenomt nmt binarize`` (core/nmt.py) runs fairseq-preprocess; rules use it."""
    callers = [p for p in _modules(PACKAGE) if any(
        isinstance(n, ast.Constant) and n.value == "fairseq-preprocess"
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))]
    assert [p.relative_to(PACKAGE).as_posix() for p in callers] == ["core/nmt.py"]
    rules = [p.name for p in RULES if "fairseq-preprocess" in p.read_text(encoding="utf-8")]
    assert not rules


def test_one_workflow_entry_point():
    assert (ROOT / "workflow" / "Snakefile").is_file()
    assert not (ROOT / "Snakefile").exists()


def test_checked_in_test_configs_are_valid():
    from phenomt.plan import Plan, load_config

    configs = sorted((ROOT / ".test" / "config").glob("*.yaml"))
    assert configs
    for config in configs:
        Plan(load_config(config)).check()
