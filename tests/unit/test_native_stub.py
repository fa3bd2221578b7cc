"""The type stub python/ccscope/_native.pyi describes the native module as built: the same names, the
same function parameters, the same Ack fields, the exception classes in the same hierarchy."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import ccscope
from ccscope import _native

STUB = ast.parse((Path(ccscope.__file__).parent / "_native.pyi").read_text())


def _stub_names() -> dict[str, ast.AST]:
    out: dict[str, ast.AST] = {}
    for node in STUB.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
    return out


def test_the_stub_names_exactly_what_the_module_exports() -> None:
    built = {n for n in dir(_native) if not n.startswith("_")}
    assert set(_stub_names()) == built


def test_each_stub_function_has_the_native_parameters_in_order() -> None:
    for name, node in _stub_names().items():
        if isinstance(node, ast.FunctionDef):
            stub = [a.arg for a in node.args.args]
            native = list(inspect.signature(getattr(_native, name)).parameters)
            assert stub == native, name


def test_the_stub_ack_has_the_native_fields() -> None:
    node = _stub_names()["Ack"]
    assert isinstance(node, ast.ClassDef)
    stub = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    native = {n for n, v in vars(_native.Ack).items() if not n.startswith("_") and inspect.isdatadescriptor(v)}
    assert stub == native


def test_the_stub_exceptions_have_the_native_bases_and_module() -> None:
    for name, node in _stub_names().items():
        cls = getattr(_native, name)
        if isinstance(node, ast.ClassDef) and issubclass(cls, BaseException):
            assert [b.id for b in node.bases] == [b.__name__ for b in cls.__bases__], name
            assert cls.__module__ == "ccscope._native", name
