#!/bin/bash
# The shared-memory queue's fuzzer: tools/fuzz/fuzz.sh --target=queue with
# the same options (see tools/fuzz/fuzz.sh --help).
exec "$(dirname "${BASH_SOURCE[0]}")/fuzz.sh" --target=queue "$@"
