"""aos_config: flattens a JSON configuration at build time.

    load("//aos:config.bzl", "aos_config")

    aos_config(
        name = "pingpong_config",
        src = "pingpong.json",                  # may import "../aos/aos.json"
        flatbuffers = [":ping_fbs", ":pong_fbs"],  # flatbuffer_cc_library targets
        deps = ["//aos:aos_config"],           # aos_configs whose files it imports
    )

makes pingpong_config.json and pingpong_config.bfbs: every import resolved
and merged, channels sorted, the config validated, and each channel's
reflection schema embedded. A channel whose type has no schema among the
flatbuffers (of this target or its deps) fails the build, naming the channel
and type. The files it imports must belong to `src` of a target in `deps`.
"""

_FLATTENER = "//aos:config_flattener"

def aos_config(name, src, flatbuffers = [], deps = [], visibility = None, testonly = False):
    native.filegroup(
        name = name + "_inputs",
        srcs = [src] + [f + "_bfbs" for f in flatbuffers] + [d + "_inputs" for d in deps],
        visibility = visibility,
        testonly = testonly,
    )
    native.genrule(
        name = name,
        srcs = [src, name + "_inputs"],
        outs = [name + ".json", name + ".bfbs"],
        tools = [_FLATTENER],
        cmd = ("$(location %s) --config=$(location %s) " +
               "--out_json=$(location %s.json) --out_bfbs=$(location %s.bfbs) " +
               "$(locations %s_inputs)") % (_FLATTENER, src, name, name, name),
        message = "Flattening aos config " + src,
        visibility = visibility,
        testonly = testonly,
    )
