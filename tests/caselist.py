# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""`run.py --list`: the test cases the suite's sources name, without running anything.

A case is named at run time by its checks ("section/what: detail" -> "section/what"), so the
list is read from the sources: every string literal in tests/*.py and tests/sections/*.py that
starts with a section's name and a "/" gives the case name it spells (the part before ": ";
an f-string's holes read "{}"). Templates the sources fill in are expanded where their values
are known here: "case/%s/%s/%s" from tests/cases/*.json, "unit/" + test_NAME from
tests/unit/test_*.c. Other names built from pieces stay as written (e.g. "lambda/oom
post-mortem/" + mode), so the list is for comparing two trees (a move must leave it unchanged)
and for finding a --filter, not a count of what one run reports."""

import ast
import glob
import os
import re

import casefile
from harness import ROOT

TESTS = os.path.join(ROOT, "tests")
# Names that start like a case but are paths or other text, whichever section spells them.
NOT_A_CASE = re.compile(r"\.(md|json|c|py|txt|sh|so|folded|svg|gz)\b|\s{2}|\n")


def sources():
    return sorted(glob.glob(os.path.join(TESTS, "*.py")) + glob.glob(os.path.join(TESTS, "sections", "*.py")))


def prefixes():
    """The sections' check prefixes: each module's name, and "lambda" for aws_lambda.py."""
    names = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(TESTS, "sections", "*.py"))}
    names.discard("__init__")
    names.discard("aws_lambda")
    return names | {"lambda"}


def literals(path):
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
        elif isinstance(node, ast.JoinedStr):
            yield "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)


def spelled_names():
    rx = re.compile(r"^(%s)/" % "|".join(sorted(prefixes())))
    names = set()
    for path in sources():
        for s in literals(path):
            if rx.match(s) and not NOT_A_CASE.search(s):
                names.add(s.split(": ", 1)[0])
    return names


def case_names():
    names = spelled_names()
    for c in casefile.load_cases():
        for flavor in casefile.case_flavors(c):
            for mode in casefile.case_modes(c):
                names.add("case/%s/%s/%s" % (c["name"], flavor, mode))
    for src in glob.glob(os.path.join(TESTS, "unit", "test_*.c")):
        names.add("unit/" + os.path.basename(src)[:-2])
    return sorted(names)
