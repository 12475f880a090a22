import subprocess
import sys
from pathlib import Path

import pytest

from phenomt.cli import COMMAND_MODULES, COMMANDS, build_parser, main, modules_for
from phenomt.core.lazy import lazy_import


def test_command_map_matches_what_modules_register():
    parser = build_parser(COMMAND_MODULES)
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert set(subparsers.choices) == set(COMMANDS)
    for command, modules in COMMANDS.items():
        sub = build_parser(modules)
        choices = next(a for a in sub._actions if a.dest == "command").choices
        assert command in choices, f"{command} is not registered by {modules}"


#: The one bare command: what a newcomer types first.
TOP_LEVEL = {"evaluate"}


def test_every_command_is_group_then_command():
    """One grammar: `phenomt <group> <command>`, never a third level; the only bare command
    is `phenomt evaluate`."""
    parser = build_parser(COMMAND_MODULES)
    groups = next(a for a in parser._actions if a.dest == "command").choices
    for group, group_parser in groups.items():
        commands = [a for a in group_parser._actions if a.dest.startswith("command_")]
        if group in TOP_LEVEL:
            assert not commands
            continue
        assert commands, f"`phenomt {group}` is a command, not a group"
        for name, command in commands[0].choices.items():
            nested = [a for a in command._actions if a.dest.startswith("command_")]
            assert not nested, f"`phenomt {group} {name}` has sub-commands"


def test_only_the_invoked_command_is_loaded():
    assert modules_for(["corpus", "prepare", "--help"]) == ("phenomt.core.corpus",
                                                             "phenomt.core.stats")
    assert modules_for(["--version"]) == COMMAND_MODULES
    assert modules_for(["unknown"]) == COMMAND_MODULES


def test_input_errors_exit_2_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\n")
    assert main(["corpus", "stats", "--inputs", str(bad), str(bad), "--langs", "de", "en",
                 "--label", "x", "--split", "test", "--output", str(tmp_path / "o.json")]) == 2
    assert f"{bad}:2: invalid UTF-8" in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("argv", [
    ["evaluate", "--src", "s", "--ref", "r", "--langs", "xx-yy", "--hyp", "a=b"],
    ["score", "bleu", "--hyp", "h"],
])
def test_usage_errors_are_one_line_pointing_at_help(argv, capsys):
    with pytest.raises(SystemExit) as end:
        main(argv)
    assert end.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage:" not in err
    assert err.startswith(f"phenomt {' '.join(argv[:2]) if argv[0] == 'score' else argv[0]}: "
                          "error: ")
    assert err.rstrip().endswith("--help)")


def test_version(capsys):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "phenomt" in capsys.readouterr().out


@pytest.mark.parametrize("group", ["score", "systems", "ldd", "lexcons", "nat", "locality"])
def test_parsing_a_scoring_command_does_not_import_pandas(group):
    """Scoring jobs are most of a run's processes: pandas (about half a second per process)
    is imported only when a table is built."""
    code = ("import sys; from phenomt.cli import COMMANDS, build_parser; "
            f"build_parser(COMMANDS[{group!r}]); print('pandas.core' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"


def test_lazy_import_loads_on_first_use_and_reuses_loaded_modules(capsys):
    name = "phenomt_lazy_probe"
    assert name not in sys.modules
    probe = Path(__file__).parent / "data" / f"{name}.py"
    sys.path.insert(0, str(probe.parent))
    try:
        module = lazy_import(name)
        assert capsys.readouterr().out == ""  # nothing executed yet
        assert module.LOADED is True  # the first attribute access runs the module
        assert capsys.readouterr().out == "probe executed\n"
        assert lazy_import(name) is module
        assert lazy_import("json") is sys.modules["json"]
        with pytest.raises(ModuleNotFoundError, match="no_such_module_here"):
            lazy_import("no_such_module_here")
    finally:
        sys.path.remove(str(probe.parent))
        sys.modules.pop(name, None)


def test_every_option_of_evaluate_and_every_group_says_what_it_does():
    import argparse

    from phenomt.cli import COMMANDS, GROUP_HELP, build_parser

    parser = build_parser()
    groups = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in groups._choices_actions}
    for name in COMMANDS:
        nested = any(isinstance(a, argparse._SubParsersAction)
                     for a in groups.choices[name]._actions)
        # a group says what its commands do; a top-level command (evaluate) has its own help
        assert helps[name] == GROUP_HELP[name] if nested else helps[name], name
    evaluate = groups.choices["evaluate"]
    missing = [a.dest for a in evaluate._actions if not a.help]
    assert not missing
    assert "When a mirror is needed" in evaluate.format_help()


def _commands(parser, path=()):
    """Every command path of ``parser``: ("score", "bleu"), ("evaluate",) ..."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))
            return
    yield path


def test_the_developers_command_table_lists_every_command():
    """docs/development.md's table of groups and commands, against the parser."""
    import re

    text = (Path(__file__).parents[1] / "docs" / "development.md").read_text(encoding="utf-8")
    documented = {}
    for group, cell in re.findall(r"^\| `([a-z]+)` \| (.*) \|$", text, re.MULTILINE):
        documented[group] = set(re.findall(r"`([a-z0-9-]+)`", cell))
    actual: dict[str, set[str]] = {}
    for path in _commands(build_parser()):
        actual.setdefault(path[0], set()).update(path[1:2])
    assert set(documented) == set(actual)
    for group, commands in actual.items():
        assert documented[group] == commands, group
