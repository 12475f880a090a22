import pytest

from phenomt.cli import COMMAND_MODULES, COMMANDS, build_parser, main, modules_for


def test_command_map_matches_what_modules_register():
    parser = build_parser(COMMAND_MODULES)
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert set(subparsers.choices) == set(COMMANDS)
    for command, modules in COMMANDS.items():
        sub = build_parser(modules)
        choices = next(a for a in sub._actions if a.dest == "command").choices
        assert command in choices, f"{command} is not registered by {modules}"


def test_every_command_is_group_then_command():
    """One grammar: `phenomt <group> <command>`, never a third level or a bare command."""
    parser = build_parser(COMMAND_MODULES)
    groups = next(a for a in parser._actions if a.dest == "command").choices
    for group, group_parser in groups.items():
        commands = [a for a in group_parser._actions if a.dest.startswith("command_")]
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


def test_version(capsys):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "phenomt" in capsys.readouterr().out
