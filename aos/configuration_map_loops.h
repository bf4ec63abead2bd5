#ifndef AOS_CONFIGURATION_MAP_LOOPS_H_
#define AOS_CONFIGURATION_MAP_LOOPS_H_

// Finding maps that never settle, in near-linear time.
//
// GetChannel (aos/configuration_lookup.h) maps a name again and again until
// no map matches; a set of maps may instead rename in a circle (/a -> /b ->
// /a) or grow a name forever (/camera* -> /camera/front). Which maps apply
// depends on the application asking, its node and the type, so the rule is:
// from every map's match name (its prefix, for a '*' map), asked with the
// map's match type, by every application and on every node, renaming must
// settle.
//
// Checking that literally costs maps x applications x nodes x chain length.
// Instead: the chains of the config-wide maps that name no node are followed
// once, each name remembered with the next name on its chain that some more
// specific map (an application's, or one with a source_node) could rename;
// then only the applications and nodes that have such maps are walked, from
// the names their maps touch, skipping along remembered chains, and an
// application together with a node only where the chains of one pass a name
// the other's maps rename. Where a walk cannot rule a loop out (a name comes
// back, or the chain may exceed MapChain's length limit), that one
// application, node and type are checked literally, so the result is the
// literal check's (a randomized test in configuration_test compares them).

#include "absl/status/status.h"
#include "aos/configuration_generated.h"
#include "aos/configuration_validation.h"

namespace aos::configuration {

// Returns OK, or InvalidArgument naming the file of the first map of the
// loop and the loop ("maps loop: /a -> /b -> /a (for application pong) (on
// node pi1)"). Maps must already be valid (match.name and rename.name set).
// Cost: O(total map chain length) for config-wide maps, plus, for each
// application or node with its own maps, the chains starting where those
// maps apply; names are hashed, so near-linear in the config's size.
absl::Status ValidateMapLoops(const Configuration& config,
                              const ConfigSources& sources);

}  // namespace aos::configuration

#endif  // AOS_CONFIGURATION_MAP_LOOPS_H_
