#!/usr/bin/env python3
"""The `bazel` the docs test puts first on PATH (docs/building.md, "The docs test").

Inside a Bazel test, Bazel cannot run again, so the docs test answers the
docs' Bazel commands from what its own build made. This stands in for
`bazel build` and `bazel run` exactly as far as the docs need:

  bazel build [-c opt] [--flag...] TARGET...
      links, under bazel-bin/ of the workspace (the first directory up from
      the working directory with a WORKSPACE file), what a real build of
      each TARGET makes there: its outputs and the generated files of its
      runfiles (a binary's config). //..., //pkg/..., //pkg:all work.
  bazel run [flags] TARGET [--] [ARGS...]
      builds TARGET, then runs its executable with ARGS in its runfiles
      directory, with BUILD_WORKSPACE_DIRECTORY and BUILD_WORKING_DIRECTORY
      set, as bazel run does.

It knows only the targets tools/docs_test/BUILD lists in `docs_targets`; any
other target, and any other Bazel command, is an error that says so. Nothing
is compiled: a program the docs run without building it first is missing
from bazel-bin, as it would be for a reader.
"""

import os
import sys

# Bazel flags that take the next argument as their value.
_VALUE_FLAGS = {"-c", "--compilation_mode", "--config", "--output_base"}


def fail(message, status=1):
    print(f"ERROR: {message} (the docs test's bazel, tools/docs_test/fake_bazel.py)",
          file=sys.stderr)
    sys.exit(status)


def read_manifest(path):
    """{label: [(short_path, is_executable)]} of docs_targets.manifest."""
    outputs = {}
    with open(path, encoding="utf-8") as manifest:
        for line in manifest:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "out":
                outputs.setdefault(fields[1], []).append((fields[2], fields[3] == "exe"))
    return outputs


def find_workspace():
    directory = os.getcwd()
    while True:
        if os.path.isfile(os.path.join(directory, "WORKSPACE")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            fail("the 'build' command is only supported from within a workspace "
                 "(below a directory containing a WORKSPACE file)", 2)
        directory = parent


def expand(pattern, outputs):
    """The labels of `pattern`, a label or //pkg/..., //..., //pkg:all."""
    if not pattern.startswith("//"):
        fail(f"{pattern}: give targets as //package:name")
    if pattern.endswith("/...") or pattern == "//...":
        prefix = pattern[2:-len("...")].rstrip("/")
        labels = [label for label in outputs
                  if prefix == "" or label[2:].split(":")[0] == prefix or
                  label[2:].startswith(prefix + "/")]
    elif pattern.endswith(":all") or pattern.endswith(":*"):
        package = pattern[2:].rsplit(":", 1)[0]
        labels = [label for label in outputs if label[2:].split(":")[0] == package]
    else:
        label = pattern if ":" in pattern else f"{pattern}:{pattern.rsplit('/', 1)[-1]}"
        labels = [label] if label in outputs else []
    if not labels:
        fail(f"no target {pattern} among those the docs test built: add it to "
             "docs_targets in tools/docs_test/BUILD if the docs use it")
    return sorted(labels)


def build(patterns, outputs, runfiles, workspace):
    """Links each pattern's files into bazel-bin; returns the labels built."""
    labels = []
    for pattern in patterns:
        labels += expand(pattern, outputs)
    bin_dir = os.path.join(workspace, "bazel-bin")
    for label in labels:
        for short_path, executable in outputs[label]:
            link = os.path.join(bin_dir, short_path)
            os.makedirs(os.path.dirname(link), exist_ok=True)
            if not os.path.lexists(link):
                os.symlink(os.path.join(runfiles, short_path), link)
            if executable:
                tree = link + ".runfiles"
                os.makedirs(tree, exist_ok=True)
                if not os.path.lexists(os.path.join(tree, "aos")):
                    os.symlink(runfiles, os.path.join(tree, "aos"))
    print(f"INFO: Build completed successfully: {len(labels)} targets "
          "(linked from the docs test's runfiles)", file=sys.stderr)
    return labels


def main(argv):
    manifest, runfiles = argv[0], argv[1]
    args = argv[2:]
    outputs = read_manifest(manifest)
    # Startup options come before the command.
    while args and args[0].startswith("-"):
        args = args[1:]
    if not args:
        fail("no command: this bazel knows build and run", 2)
    command, args = args[0], args[1:]
    if command not in ("build", "run"):
        fail(f"'bazel {command}' does not run inside the docs test (it is a Bazel "
             "test itself): mark the command '# not run by the docs test: <why>'", 2)
    targets, rest = [], []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest = args[i + 1:]
            break
        if arg in _VALUE_FLAGS:
            i += 1
        elif not arg.startswith("-"):
            targets.append(arg)
        i += 1
    workspace = find_workspace()
    if command == "build":
        if not targets:
            fail("no targets given")
        build(targets + rest, outputs, runfiles, workspace)
        return 0
    if not targets:
        fail("bazel run needs a target")
    target, rest = targets[0], targets[1:] + rest
    labels = build([target], outputs, runfiles, workspace)
    executables = [path for path, executable in outputs[labels[0]] if executable]
    if len(labels) != 1 or not executables:
        fail(f"{target} is not one executable target")
    binary = os.path.join(workspace, "bazel-bin", executables[0])
    env = dict(os.environ, BUILD_WORKSPACE_DIRECTORY=workspace,
               BUILD_WORKING_DIRECTORY=os.getcwd())
    os.chdir(os.path.join(binary + ".runfiles", "aos"))
    os.execve(binary, [binary] + rest, env)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
