"""A name a function reads and its module never defines (msmigrate/undefined_names.py): read where the line runs,
as Python does, so a branch never taken costs nothing, in a compiled graph too (MindSpore's parser would refuse
the bare name in any branch, naming no line)."""


class UndefinedName(MigrationError, NameError):
    """Python's NameError (an `except NameError` catches it), naming the original line."""


@_migration_constexpr(check=False)
def undefined_name(name, where):
    """Raises UndefinedName: a constexpr, so a compiled graph raises it while compiling a branch that reads it."""
    raise UndefinedName(f"name '{name}' is not defined ({where} reads it; the program never defines it)")
