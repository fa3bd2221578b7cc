"""Errors about one argument of a Python API function, worded for the API or for a command's options.

A function of the API names its own arguments (``trials=0: need at least one trial``, ``out /x: is a file,
not a folder``); the command that calls it words the same error with its options (``--trials 0: ...``,
``-o /x: ...``) through :meth:`NamedArgument.worded` and a map from argument to option.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, TypeVar

#: The largest seed a scenario file can hold (a TOML integer is i64), so that a run's saved
#: scenario.toml replays it; ``--seed`` takes 0..MAX_SEED.
MAX_SEED = 2**63 - 1

__all__ = ["ArgumentError", "MAX_SEED", "NamedArgument"]

_UNSET = object()
_FIELDS = ("argument", "detail", "value", "key", "path", "refs")
E = TypeVar("E", bound="NamedArgument")


class NamedArgument:
    """Mixin for an exception about one argument. Made by :meth:`naming`; ``str(e)`` names the Python
    argument (``seeds=0``, ``grid['k']``, ``out PATH``), :meth:`worded` with a map the options
    (``--seeds 0``, ``--param k``, ``-o PATH``). An argument given as an option already (``-o``: a command
    calling the store itself) is worded as an option either way. In `detail`, ``{name}`` for each name of
    `refs` stands for another argument: ``refs[name][0]`` in the API's wording (``overwrite=True``,
    ``label='k'``), the option in a command's (its map's, else ``refs[name][1]``), followed by the value
    ``refs[name][2]`` when there is one (``--label k``)."""

    argument: Optional[str] = None  # None: a message naming no argument, worded as it is
    detail: str = ""
    value: Any = _UNSET
    key: Optional[str] = None
    path: bool = False
    refs: Mapping[str, tuple] = {}

    @classmethod
    def naming(cls: type[E], argument: str, detail: str, *, value: Any = _UNSET, key: Optional[str] = None,
               path: bool = False, refs: Optional[Mapping[str, tuple]] = None) -> E:
        """The error about `argument` (its `value`, or the entry `key` of it): `detail` says what is wrong.
        A `path` value is shown as it is (``out /x``), any other as ``argument=repr``."""
        fields = dict(argument=argument, detail=detail, value=value, key=key, path=path, refs=dict(refs or {}))
        e = cls(_wording(fields, None))  # type: ignore[call-arg]
        for k, v in fields.items():
            setattr(e, k, v)
        return e

    def worded(self, options: Optional[Mapping[str, str]] = None) -> str:
        """The message naming the Python argument, or, given `options` (argument -> option), the option."""
        if self.argument is None:
            return str(self)
        return _wording({k: getattr(self, k) for k in _FIELDS}, options)


def _wording(f: Mapping[str, Any], options: Optional[Mapping[str, str]]) -> str:
    arg, value, key = f["argument"], f.get("value", _UNSET), f.get("key")
    if options is None and arg.startswith("-"):
        options = {}  # a command named its option itself
    if options is None:
        head = arg + (f"[{key!r}]" if key is not None else "")
        if value is not _UNSET:
            head += f" {value}" if f.get("path") else f"={value!r}"
    else:
        head = options.get(arg, arg) + (f" {key}" if key is not None else "")
        head += f" {value}" if value is not _UNSET else ""
    detail = f["detail"]
    for name, (api_text, option, *value_text) in f.get("refs", {}).items():
        cli_text = " ".join([options.get(name, option), *map(str, value_text)]) if options is not None else ""
        # str.replace, not format: a value's repr in the detail may hold braces
        detail = detail.replace("{" + name + "}", api_text if options is None else cli_text)
    return f"{head}: {detail}"


class ArgumentError(NamedArgument, ValueError):
    """A bad argument of a Python API function (a ValueError), found before any work."""
