"""The ``ccscope`` console script.

A well-formed ``ccscope run SCENARIO -o DIR [options]`` runs straight through
:func:`ccscope.run_command.run`; everything else (every other command, ``--help``, any argument list
this parser does not take exactly as ``ccscope run`` does) goes to the full typer application in
:mod:`ccscope.cli`, which prints the help and the usage errors. typer 0.2x builds a pydantic
validator for each option it parses, and importing typer, pydantic and the CLI's twenty other
commands cost more CPU than the simulation of a 300 s dumbbell; a one-off run should not pay it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Sequence

from ccscope.arguments import MAX_SEED

#: ``ccscope run``'s options as :mod:`ccscope.cli` declares them (a test checks they are the same):
#: option string -> (parameter name, kind), kind "value" (one value), "int", "multiple" or "flag".
RUN_OPTIONS = {
    "-o": ("out", "value"),
    "--out": ("out", "value"),
    "--seed": ("seed", "int"),
    "--set": ("sets", "multiple"),
    "--packets": ("packets", "flag"),
    "--cwnd": ("cwnd", "flag"),
    "--plot": ("plot", "flag"),
    "--overwrite": ("overwrite", "flag"),
}
#: ``ccscope run``'s one positional argument.
RUN_ARGUMENT = "scenario"


def parse_run(args: Sequence[str]) -> Optional[dict]:
    """The keyword arguments of :func:`ccscope.run_command.run` for ``ccscope run ARGS``, or None when
    ARGS are anything but a plain, complete, valid list (help, an unknown or repeated option, a value
    that looks like an option, a non-decimal seed or one above MAX_SEED, a missing argument): the full CLI then handles them,
    with its own messages."""
    kw: dict = {"sets": []}
    it = iter(args)
    for tok in it:
        if tok.startswith("-"):
            name, eq, value = tok.partition("=") if tok.startswith("--") else (tok, "", "")
            spec = RUN_OPTIONS.get(name)
            if spec is None:
                return None
            dest, kind = spec
            if kind == "flag":
                if eq or dest in kw:
                    return None
                kw[dest] = True
                continue
            if not eq:
                value = next(it, None)
                if value is None or value.startswith("-"):
                    return None
            if kind == "multiple":
                kw[dest].append(value)
                continue
            # A seed's length is checked first: int() refuses more than 4300 digits with a ValueError.
            if dest in kw or not value or (kind == "int" and not (value.isascii() and value.isdigit()
                                                                  and len(value) <= len(str(MAX_SEED))
                                                                  and int(value) <= MAX_SEED)):
                return None
            kw[dest] = int(value) if kind == "int" else Path(value)
        elif RUN_ARGUMENT in kw:
            return None
        else:
            kw[RUN_ARGUMENT] = tok
    if RUN_ARGUMENT not in kw or "out" not in kw:
        return None
    kw["sets"] = kw["sets"] or None
    return kw


def main() -> None:
    args = sys.argv[1:]
    kw = parse_run(args[1:]) if args[:1] == ["run"] else None
    if kw is None:
        from ccscope import cli

        return cli.main()
    from ccscope import run_command

    try:
        run_command.run(**kw)
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()
