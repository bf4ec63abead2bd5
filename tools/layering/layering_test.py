#!/usr/bin/env python3
"""Checks the layers of the build (docs/building.md, "Layers").

Usage: layering_test.py GRAPH.xml BUILD...

GRAPH.xml is `bazel query --output=xml` of the dependencies of the
production roots (tools/layering/BUILD, made by a genquery); each BUILD is
one package under //aos. The test fails when:

- a production target under //aos (neither a test nor testonly) depends, by
  any edge (deps, data, srcs, tools), on a target of //examples or //tools:
  the framework never depends on its examples or on the scripts around it;
- a production target of //aos/ipc_lib depends on the configuration
  (//aos:configuration, //aos:configuration_fbs): queues know sizes and
  counts, aos/events maps channels to them;
- a production target of an //aos BUILD file is not in the graph, so it
  would go unchecked: it must be added to AOS_PRODUCTION_ROOTS; or a package
  of the graph under //aos is not among the BUILD files given.

Each failure names the path of dependencies that breaks the rule.
"""

import ast
import collections
import os
import re
import sys
import xml.etree.ElementTree as tree

AOS = re.compile(r"^//aos[/:]")
FORBIDDEN_FOR_AOS = re.compile(r"^//(examples|tools)[/:]")
IPC_LIB = re.compile(r"^//aos/ipc_lib:")
CONFIGURATION = {"//aos:configuration", "//aos:configuration_fbs"}
ROOTS_LIST = "AOS_PRODUCTION_ROOTS in tools/layering/BUILD"


class Graph:
    """Targets and their edges, from query XML."""

    def __init__(self, path):
        self.rules = set()
        self.edges = collections.defaultdict(list)
        for element in tree.parse(path).getroot():
            name = element.get("name")
            if element.tag == "rule":
                self.rules.add(name)
                self.edges[name] = [
                    child.get("name") for child in element
                    if child.tag == "rule-input"
                ]
            elif element.tag == "generated-file":
                self.edges[name] = [element.get("generating-rule")]
            elif name is not None:
                self.edges.setdefault(name, [])

    def paths_to(self, sources, is_target):
        """For each target is_target accepts that sources reach, the
        shortest path to it (a list of labels, from a source)."""
        parent = {source: None for source in sources}
        queue = collections.deque(sorted(sources))
        found = {}
        while queue:
            label = queue.popleft()
            if is_target(label) and label not in found:
                path = []
                step = label
                while step is not None:
                    path.append(step)
                    step = parent[step]
                found[label] = path[::-1]
                continue  # Past a forbidden target: one report per target.
            for next_label in self.edges.get(label, []):
                if next_label not in parent:
                    parent[next_label] = label
                    queue.append(next_label)
        return found


def production_targets(build_file):
    """The //pkg:name labels of the rules a BUILD file declares with a
    literal name, except tests and testonly ones."""
    package = os.path.dirname(os.path.normpath(build_file))
    with open(build_file, encoding="utf-8") as file:
        module = ast.parse(file.read(), filename=build_file)
    labels = []
    for statement in module.body:
        if not (isinstance(statement, ast.Expr) and
                isinstance(statement.value, ast.Call)):
            continue
        call = statement.value
        function = call.func
        kind = (function.id if isinstance(function, ast.Name) else
                function.attr if isinstance(function, ast.Attribute) else "")
        if kind.endswith("_test") or kind == "test_suite":
            continue
        arguments = {keyword.arg: keyword.value for keyword in call.keywords}
        name = arguments.get("name")
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            continue
        testonly = arguments.get("testonly")
        if isinstance(testonly, ast.Constant) and testonly.value:
            continue
        labels.append("//%s:%s" % (package, name.value))
    return labels


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: layering_test.py GRAPH.xml BUILD...")
    graph = Graph(argv[1])
    build_files = argv[2:]
    failures = []

    listed = {
        os.path.dirname(os.path.normpath(build_file))
        for build_file in build_files
    }
    for package in sorted({
            label[2:label.index(":")]
            for label in graph.rules if AOS.match(label)
    } - listed):
        failures.append(
            "//%s is a package of the graph whose BUILD file is not in "
            "AOS_BUILD_FILES in tools/layering/BUILD; add it there" % package)

    declared = [
        label for build_file in build_files
        for label in production_targets(build_file)
    ]
    for label in declared:
        if label not in graph.rules:
            failures.append(
                "%s is not checked: nothing in %s depends on it; add it "
                "there (or mark it testonly if only tests use it)" %
                (label, ROOTS_LIST))

    aos_rules = {label for label in graph.rules if AOS.match(label)}
    for target, path in sorted(
            graph.paths_to(aos_rules, FORBIDDEN_FOR_AOS.match).items()):
        failures.append(
            "%s is under //aos and depends on %s, which is not: %s" %
            (path[0], target, " -> ".join(path)))

    ipc_rules = {label for label in graph.rules if IPC_LIB.match(label)}
    for target, path in sorted(
            graph.paths_to(ipc_rules, CONFIGURATION.__contains__).items()):
        failures.append(
            "%s is in //aos/ipc_lib and depends on the configuration "
            "(%s); map channels to queue sizes in aos/events instead: %s" %
            (path[0], target, " -> ".join(path)))

    if failures:
        for failure in failures:
            print("layering_test: " + failure)
        print("layering_test: %d failure(s); docs/building.md, \"Layers\", "
              "says what may depend on what" % len(failures))
        return 1
    print("layering_test: %d production targets under //aos (%d declared in "
          "%d BUILD files): none depends on //examples or //tools; the %d of "
          "//aos/ipc_lib do not depend on the configuration" %
          (len(aos_rules), len(declared), len(build_files), len(ipc_rules)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
