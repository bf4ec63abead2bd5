"""docs_targets: what a `bazel build` of each target would put in bazel-bin.

    docs_targets(
        name = "docs_targets",
        targets = ["//examples:ping", "//aos/tools:aos_dump"],
        sources = ["//:README.md", "//tools:aos.sh"],
    )

makes docs_targets.manifest, one line per file:

    out <TAB> //examples:ping <TAB> examples/ping <TAB> exe
    out <TAB> //examples:ping <TAB> examples/pingpong_config.json <TAB>
    src <TAB> README.md

`out` lines: the files `bazel build` of that target makes under bazel-bin
(its outputs and the generated files its runfiles hold: a binary's data,
e.g. its config), `exe` on its executable. `src` lines: source files of the
workspace. Every one of them is in the runfiles of whatever depends on this
target, at its path from the workspace root, so that the docs test can lay
out a checkout and a bazel-bin from them (docs/building.md, "The docs
test").
"""

def _label(target):
    # "@//examples:ping" in newer Bazels, "//examples:ping" in 4.2.
    text = str(target.label)
    return text[1:] if text.startswith("@//") else text

def _main_repository_output(file):
    return not file.is_source and not file.short_path.startswith("../")

def _docs_targets_impl(ctx):
    lines = []
    runfiles = ctx.runfiles(files = ctx.files.sources)
    for target in ctx.attr.targets:
        info = target[DefaultInfo]
        executable = info.files_to_run.executable
        files = depset(transitive = [info.files, info.default_runfiles.files])
        for file in files.to_list():
            if _main_repository_output(file):
                lines.append("out\t%s\t%s\t%s" % (
                    _label(target),
                    file.short_path,
                    "exe" if file == executable else "",
                ))
        runfiles = runfiles.merge(ctx.runfiles(transitive_files = files))
        runfiles = runfiles.merge(info.default_runfiles)
    for file in ctx.files.sources:
        lines.append("src\t%s" % file.short_path)
    manifest = ctx.actions.declare_file(ctx.label.name + ".manifest")
    ctx.actions.write(manifest, "\n".join(sorted(lines)) + "\n")
    return [DefaultInfo(
        files = depset([manifest]),
        runfiles = runfiles.merge(ctx.runfiles(files = [manifest])),
    )]

docs_targets = rule(
    implementation = _docs_targets_impl,
    attrs = {
        "targets": attr.label_list(allow_files = True),
        "sources": attr.label_list(allow_files = True),
    },
)
