// The probes of the `aos` tracepoint provider (aos_tracepoints.h), built
// into libaos_lttng_tp.so. Loading it (LD_PRELOAD) brings in liblttng-ust,
// its listener threads and its session daemon registration: only the
// processes being traced pay for them (docs/lttng.md).
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "aos/tracing/lttng/aos_tracepoints.h"
