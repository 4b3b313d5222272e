#!/usr/bin/env python3
"""Renders the symbol graphs of one module as a sorted list, one public declaration (or conformance) a line.

Usage: render.py SYMBOLGRAPH_DIRECTORY MODULE. Reads MODULE.symbols.json and MODULE@*.symbols.json (extensions of
other modules' types); SPI symbols are not in them unless dump-symbol-graph was asked for them."""
import glob
import json
import os
import sys

directory, module = sys.argv[1], sys.argv[2]
files = [os.path.join(directory, f"{module}.symbols.json")]
files += sorted(glob.glob(os.path.join(directory, f"{module}@*.symbols.json")))
lines = set()
for path in files:
    if not os.path.exists(path):
        continue
    graph = json.load(open(path))
    names = {}
    for symbol in graph["symbols"]:
        names[symbol["identifier"]["precise"]] = ".".join(symbol["pathComponents"])
        declaration = "".join(f["spelling"] for f in symbol.get("declarationFragments", []))
        declaration = " ".join(declaration.split())
        constraints = symbol.get("swiftExtension", {}).get("constraints", [])
        constraints += symbol.get("swiftGenerics", {}).get("constraints", [])
        where = ", ".join(
            f"{c['lhs']} {':' if c['kind'] == 'conformance' else '=='} {c['rhs']}" for c in constraints)
        if where and " where " not in declaration:
            declaration += f" where {where}"
        lines.add(f"{'.'.join(symbol['pathComponents'])} | {declaration}")
    for relation in graph["relationships"]:
        if relation["kind"] != "conformsTo":
            continue
        source = names.get(relation["source"])
        if source is None:
            continue
        target = names.get(relation["target"]) or relation.get("targetFallback") or relation["target"]
        lines.add(f"{source} | conforms to {target}")
print("\n".join(sorted(lines)))
