"""Other tools' options on a command here that spells them otherwise (cli/habits.py): the first one met
before `--` gets its pointer; anything else is left to the command."""

from spacy_elmo.cli.habits import POINTERS, habit_pointer


def test_the_first_habit_of_the_command_gets_its_pointer():
    assert habit_pointer(["dump", "in.txt", "out.hdf5", "--top", "--all"]) == POINTERS["dump", "--top"]
    assert "--layers average" in (habit_pointer(["dump", "--average"]) or "")


def test_other_commands_options_and_arguments_after_a_double_dash_are_left_alone():
    assert habit_pointer([]) is None
    assert habit_pointer(["elmo", "in.txt", "out.hdf5", "--all"]) is None
    assert habit_pointer(["dump", "in.txt", "out.hdf5", "--layers", "top"]) is None
    assert habit_pointer(["dump", "--", "--all", "out.hdf5"]) is None
