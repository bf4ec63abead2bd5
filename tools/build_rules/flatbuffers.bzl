"""flatbuffer_cc_library: a .fbs schema as a C++ library and a binary schema.

    load("//tools/build_rules:flatbuffers.bzl", "flatbuffer_cc_library")

    flatbuffer_cc_library(
        name = "ping_fbs",
        srcs = ["ping.fbs"],
        deps = ["//aos:configuration_fbs"],  # libraries of the schemas it includes
    )

makes
  :ping_fbs            cc_library with ping_generated.h (with the object API
                       unless object_api = False: schemas that hold a
                       reflection.Schema must turn it off, as Debian's
                       reflection_generated.h has none) and
                       ping_bfbs_generated.h (the binary schema, embedded:
                       <RootTable>BinarySchema::data())
  :ping_fbs_bfbs       the binary schema ping.bfbs (reflection.Schema), for
                       aos_config and JSON conversion
  :ping_fbs_includes   the .fbs files of this library and its deps, for flatc

Schemas include each other by their path from the workspace root
(`include "aos/configuration.fbs";`); flatbuffers' own reflection schema is
`include "flatbuffers/reflection.fbs";`.
"""

_FLATC = "@flatbuffers//:flatc"
_REFLECTION_FBS = "//third_party/flatbuffers_schema:reflection_fbs"
_INCLUDE_FLAGS = "-I . -I third_party/flatbuffers_schema"

def flatbuffer_cc_library(name, srcs, deps = [], object_api = True, visibility = None, testonly = False):
    if len(srcs) != 1:
        fail("flatbuffer_cc_library(%s) takes exactly one .fbs in srcs" % name)
    src = srcs[0]
    if not src.endswith(".fbs"):
        fail("flatbuffer_cc_library(%s): %s is not a .fbs file" % (name, src))
    base = src[:-len(".fbs")].split("/")[-1]

    native.filegroup(
        name = name + "_includes",
        srcs = srcs + [dep + "_includes" for dep in deps] + [_REFLECTION_FBS],
        visibility = visibility,
        testonly = testonly,
    )

    native.genrule(
        name = name + "_cpp",
        srcs = srcs + [name + "_includes"],
        outs = [base + "_generated.h", base + "_bfbs_generated.h"],
        tools = [_FLATC],
        cmd = ("$(location %s) --cpp %s --gen-name-strings --scoped-enums --bfbs-gen-embed --bfbs-builtins --bfbs-comments " +
               "--keep-prefix %s -o $(RULEDIR) $(location %s)") % (
            _FLATC,
            "--gen-object-api" if object_api else "",
            _INCLUDE_FLAGS,
            src,
        ),
        testonly = testonly,
        message = "flatc --cpp " + src,
    )

    native.genrule(
        name = name + "_bfbs",
        srcs = srcs + [name + "_includes"],
        outs = [base + ".bfbs"],
        tools = [_FLATC],
        cmd = ("$(location %s) --binary --schema --bfbs-builtins --bfbs-comments " +
               "%s -o $(RULEDIR) $(location %s)") % (_FLATC, _INCLUDE_FLAGS, src),
        visibility = visibility,
        testonly = testonly,
        message = "flatc --schema " + src,
    )

    native.cc_library(
        name = name,
        hdrs = [base + "_generated.h", base + "_bfbs_generated.h"],
        deps = deps + ["@flatbuffers"],
        visibility = visibility,
        testonly = testonly,
    )
