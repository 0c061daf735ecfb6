"""The result contracts as the report modules' docstrings state them (the documentation
site's reference page shows these same blocks), read into a shape a test can hold real
results against.

A contract block is the first ``::`` literal block after the word "contract" in a module's
docstring. It is JSON-like: ``{"key", "key": value}`` is an object with exactly those keys,
``[...]`` a list of such values, ``a | b`` alternatives (``null`` among them), ``# ...`` a
comment; an object with ``...`` or a key that is not a string (``system: ...``, ``<metric
name>: ...``) is a map or an open object, whose keys are not checked.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

REPORTS = Path(__file__).resolve().parents[2] / "analysis" / "reports"
TOKEN = re.compile(r'"[^"]*"|\.\.\.|<[^>]*>|[{}\[\]:,|]|[^\s{}\[\]:,|"<]+')


@dataclass
class Obj:
    keys: dict[str, Value] = field(default_factory=dict)
    open: bool = False
    each: Value | None = None  # a map's value, for every key


@dataclass
class Arr:
    element: Value


@dataclass
class Value:
    shapes: list[Obj | Arr] = field(default_factory=list)


def contract_block(module: str) -> tuple[str | None, str]:
    """(the section it describes, or None for the whole result; the block's text)."""
    doc = ast.get_docstring(ast.parse((REPORTS / f"{module}.py").read_text(encoding="utf-8")))
    after = doc[re.search(r"contract", doc, re.I).start() :]
    intro, _, rest = after.partition("::")
    # "Section contract (``behaviours``)::" describes one section of the result.
    section = re.search(r"\(``(\w+)``\)", intro.split("\n")[-1])
    block = []
    for line in rest.split("\n")[1:]:
        if line.strip() and not line.startswith(" "):
            break
        block.append(line)
    return (section.group(1) if section else None), "\n".join(block)


def parse(text: str) -> Value:
    text = re.sub(r"#[^\n]*", "", text)
    tokens = TOKEN.findall(text)
    value, _ = _value(tokens, 0)
    return value


def _value(tokens: list[str], i: int) -> tuple[Value, int]:
    value = Value()
    while i < len(tokens) and tokens[i] not in {",", "}", "]"}:
        if tokens[i] == "{":
            obj, i = _object(tokens, i + 1)
            value.shapes.append(obj)
        elif tokens[i] == "[":
            arr, i = _array(tokens, i + 1)
            value.shapes.append(arr)
        else:
            i += 1  # a word, a string, `|`, `<placeholder>`: no shape to check
    return value, i


def _object(tokens: list[str], i: int) -> tuple[Obj, int]:
    obj = Obj()
    while tokens[i] != "}":
        if tokens[i] == ",":
            i += 1
            continue
        key_tokens = []
        while tokens[i] not in {":", ",", "}"}:
            key_tokens.append(tokens[i])
            i += 1
        spec = Value()
        if tokens[i] == ":":
            spec, i = _value(tokens, i + 1)
        if len(key_tokens) == 1 and key_tokens[0].startswith('"'):
            obj.keys[key_tokens[0].strip('"')] = spec
        else:  # `...`, `system`, `<metric name>`: a map or an open object
            obj.open = True
            if key_tokens != ["..."]:
                obj.each = spec
    return obj, i + 1


def _array(tokens: list[str], i: int) -> tuple[Arr, int]:
    element = Value()
    while tokens[i] != "]":
        if tokens[i] == ",":
            i += 1
            continue
        value, i = _value(tokens, i)
        element.shapes += value.shapes
    return Arr(element), i + 1


def mismatches(spec: Value, data, path: str = "") -> list[str]:
    """Where `data` differs from `spec`: an object's keys not exactly the documented ones.
    Alternatives (``{...} | {}``) are met when any one of them is."""
    if data is None:
        return []
    if isinstance(data, dict):
        tried = [_object_mismatches(s, data, path) for s in spec.shapes if isinstance(s, Obj)]
        return [] if not tried or [] in tried else tried[0]
    problems = []
    if isinstance(data, list):
        for shape in spec.shapes:
            if isinstance(shape, Arr):
                for n, element in enumerate(data):
                    problems += mismatches(shape.element, element, f"{path}[{n}]")
    return problems


def _object_mismatches(shape: Obj, data: dict, path: str) -> list[str]:
    problems = []
    if not shape.open and set(data) != set(shape.keys):
        problems.append(f"{path or '.'}: {sorted(set(data) ^ set(shape.keys))}")
    for key, value in shape.keys.items():
        if key in data:
            problems += mismatches(value, data[key], f"{path}.{key}")
    if shape.each is not None and not shape.keys:
        for key, value in data.items():
            problems += mismatches(shape.each, value, f"{path}.{key}")
    return problems


def check(module: str, result: dict) -> list[str]:
    """The mismatches between `module`'s documented contract and a real result."""
    section, block = contract_block(module)
    spec = parse(block)
    return mismatches(spec, result[section] if section else result)
