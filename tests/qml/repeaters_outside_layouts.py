#!/usr/bin/env python3
"""No Repeater whose model can change sits directly in a Qt Quick layout.

Qt 6.4's layouts keep a pointer to each child until their next polish; a layout resized, or
asked for its size by an enclosing layout, between a child's deletion and that polish reads
the freed child and the app crashes (QTBUG-111792, fixed in Qt 6.5; tst_messageview.qml shows
it on the chat's answers). A Repeater remakes its delegates whenever its model changes, so a
Repeater in a layout is only safe with a model that never changes: a number, or a literal list
of constants. Any other model goes in a positioner (Column, Row, Flow, Grid), which keeps no
such pointers.

usage: repeaters_outside_layouts.py QML_DIR
"""
import pathlib
import re
import sys

LAYOUTS = {"ColumnLayout", "RowLayout", "GridLayout", "StackLayout"}


def elements(text):
    """Yields (type, parent type, body text, line) for every QML element in the file."""
    stack = []  # (type or None for a JavaScript block, start of its body)
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            line += text.count("\n", i, end)
            i = n if end < 0 else end + 2
            continue
        if c in "\"'`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            line += text.count("\n", i, j)
            i = j + 1
            continue
        if c == "\n":
            line += 1
        elif c == "{":
            m = re.search(r"(?:^|[\s:;{])([A-Z][\w.]*)\s*$", text[max(0, i - 200):i])
            stack.append((m.group(1).split(".")[-1] if m else None, i + 1, line))
        elif c == "}" and stack:
            kind, start, at = stack.pop()
            if kind:
                parent = next((k for k, _, _ in reversed(stack) if k), None)
                yield kind, parent, text[start:i], at
        i += 1


def own_model(body):
    """The element's own `model:` binding, ignoring those of elements nested in it."""
    depth = 0
    for raw in body.split("\n"):
        stripped = raw.strip()
        if depth == 0:
            m = re.match(r"model\s*:\s*(.+)$", stripped)
            if m:
                return m.group(1)
        depth += raw.count("{") - raw.count("}")
    return None


def constant(model):
    if re.fullmatch(r"\d+", model):
        return True
    if model.startswith("[") and model.rstrip(";").endswith("]"):
        # A literal list: strings, numbers and qsTr() only (no property it could follow).
        inner = re.sub(r'"(?:[^"\\]|\\.)*"', "", model)
        inner = re.sub(r"\bqsTr\(", "(", inner)
        return not re.search(r"[A-Za-z_]", inner)
    return False


def main():
    root = pathlib.Path(sys.argv[1])
    problems = []
    files = sorted(root.rglob("*.qml"))
    for path in files:
        for kind, parent, body, line in elements(path.read_text(encoding="utf-8")):
            if kind != "Repeater" or parent not in LAYOUTS:
                continue
            model = own_model(body)
            if model is None or not constant(model):
                problems.append(f"{path.relative_to(root)}:{line}: a Repeater in a {parent} with the "
                                f"model `{model}`: put it in a Column, Row, Flow or Grid")
    for p in problems:
        print(p)
    print(f"{len(files)} QML files: "
          + (f"{len(problems)} Repeaters with a changing model in a layout" if problems
             else "no Repeater with a changing model in a layout"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
