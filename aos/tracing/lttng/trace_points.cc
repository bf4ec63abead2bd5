// The tracepoint definitions of the `aos` provider, once per program, with
// dynamic probe linkage: the program holds only the call sites and their
// state words; the probes come with libaos_lttng_tp.so when it is loaded.
// At start-up lttng-ust's constructor dlopens liblttng-ust-tracepoint.so.1
// (a registry with no threads) if it is installed; nothing else happens
// until a provider is loaded.
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "aos/tracing/lttng/trace_points.h"
