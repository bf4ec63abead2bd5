// Under `bazel test --config=tsan` (docs/building.md, "ThreadSanitizer"):
// how ThreadSanitizer treats Debian's Cyclone DDS in every program and test
// that links libddsc (every target of this package that depends on it
// depends on this one).
//
// Debian's libddsc is not built with -fsanitize=thread: tsan sees none of
// its own loads and stores, nor its atomics (ddsrt_atomic_*), which order
// its threads (recv, dq.builtins, tev, listeners). It does see the C
// library functions libddsc calls, through its interceptors: recvmsg()
// filling a receive buffer, memcpy() out of it, malloc(), and
// pthread_mutex_lock() on memory another Cyclone thread handed over. With
// the atomics between them missing, those look like races, and every report
// of message_bridge_test was one: both accesses made by an interceptor
// called from libddsc, no frame of ours.
//
// ignore_noninstrumented_modules=1 ignores the memory accesses of
// interceptors called from code that is not instrumented, and keeps their
// synchronization: Cyclone's mutexes still order what they order, so a
// listener callback is still after the code that made its reader. Our code
// stays instrumented on every thread, Cyclone's included: a race between
// PeerLink::TakeProbesInListener (a listener thread) and a thread of ours,
// added on purpose, fails message_bridge_test with both stacks.
//
// What the usual suppressions would do instead:
// - `called_from_lib:libddsc.so` skips the interceptors called from libddsc
//   altogether, its mutexes included. tsan then lost the order between
//   making a writer and its listener's first call, and reported our
//   DdsParticipant::Signal::Raise() on a listener thread against the
//   Signal's construction: a race that is not there.
// - `race:libddsc.so` is matched against every stack of a report, the
//   racing threads' creation stacks included, and Cyclone creates the
//   threads our listener callbacks run on: it hides every race in those
//   callbacks (the race above passed unreported with it).
// The cost: in these programs tsan also ignores the accesses of C library
// calls made from the other libraries that are not instrumented (libstdc++,
// glog, abseil); our own code's calls are checked.
#ifdef __SANITIZE_THREAD__
extern "C" const char* __tsan_default_options() {
  return "ignore_noninstrumented_modules=1";
}
#endif
