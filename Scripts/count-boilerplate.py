#!/usr/bin/env python3
"""Counts each module's boilerplate lines in Swift files: the lines of a `struct …: Module` that are not feature logic.

Boilerplate: the type line, manifest lines, `init`, the `register` and `activate` signatures, wiring calls
(`module.…(`), lines that only name a closure's typed parameters, service resolution (`services.resolve`,
`@Injected`), and lines that only close the type, `register` or a registered closure (braces inside feature
logic are feature logic). Blank lines and comments count as neither.
Usage: count-boilerplate.py FILE…"""
import re
import sys

WIRING = re.compile(r"^\s*(module\.|@Injected|let \w+ = try context\.services\.resolve)")
PARAMETERS = re.compile(r"^\s*\([^()]*:[^()]*\)\s+in\s*$")
SIGNATURES = re.compile(r"^\s*(public )?(static )?func (register|activate)\(|^\s*(public )?init\(\) \{\}")
BRACES = re.compile(r"^[\s})\]]*$")

verbose = "-v" in sys.argv
for path in [argument for argument in sys.argv[1:] if argument != "-v"]:
    module, count, depth, open_parentheses = None, 0, 0, 0
    for line in open(path):
        stripped = line.strip()
        if module is None:
            match = re.match(r"(public )?struct (\w+): Module \{", stripped)
            if match:
                module, count, depth = match.group(2), 1, 1
            continue
        depth += line.count("{") - line.count("}")
        boilerplate = False
        if not stripped or stripped.startswith("//"):
            pass
        elif open_parentheses > 0 or "static let manifest" in stripped:
            open_parentheses += line.count("(") - line.count(")")
            boilerplate = True
        elif WIRING.match(line) or PARAMETERS.match(line) or SIGNATURES.match(line) or (BRACES.match(line) and depth <= 2):
            boilerplate = True
        count += boilerplate
        if verbose:
            print(f"{'B' if boilerplate else ' '} {line.rstrip()}")
        if depth == 0:
            print(f"{module}\t{count}")
            module = None
