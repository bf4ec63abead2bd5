#include "aos/tools/streamer/report_source.h"

#include "aos/util/str_cat.h"

namespace aos::streamer {

std::string MatchTally::SeenNames() const {
  return seen_names.empty() ? std::string("nobody") : StrJoin(seen_names, ", ");
}

}  // namespace aos::streamer
