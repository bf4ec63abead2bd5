#include "aos/tools/node_summary.h"

#include <sstream>
#include <string_view>
#include <vector>

#include "aos/flatbuffer_string_view.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

std::string DescribeConnection(const aos::Connection& connection) {
  if (connection.time_to_live() == 0) {
    return StrCat(StringView(connection.name()), " (reliable)");
  }
  return StrCat(StringView(connection.name()), " (best effort, time to live ",
                connection.time_to_live() / 1'000'000.0, " ms)");
}

}  // namespace

std::string DescribeNode(const Configuration& config, const Node& node) {
  const std::string_view name = StringView(node.name());
  std::vector<std::string> sends;
  std::vector<std::string> receives;
  if (config.channels() != nullptr) {
    for (const Channel* channel : *config.channels()) {
      const std::string what =
          StrCat(StringView(channel->name()), " ", StringView(channel->type()));
      if (StringView(channel->source_node()) == name) {
        std::vector<std::string> to;
        if (channel->destination_nodes() != nullptr) {
          for (const aos::Connection* c : *channel->destination_nodes()) {
            to.push_back(DescribeConnection(*c));
          }
        }
        sends.push_back(to.empty() ? StrCat(what, " (local)")
                                   : StrCat(what, " -> ", StrJoin(to, ", ")));
        continue;
      }
      if (channel->destination_nodes() == nullptr) continue;
      for (const aos::Connection* c : *channel->destination_nodes()) {
        if (StringView(c->name()) == name) {
          receives.push_back(
              StrCat(what, " <- ", StringView(channel->source_node())));
        }
      }
    }
  }
  std::vector<std::string_view> applications;
  if (config.applications() != nullptr) {
    for (const Application* application : *config.applications()) {
      if (application->nodes() == nullptr) continue;
      for (const flatbuffers::String* n : *application->nodes()) {
        if (n->string_view() == name) {
          applications.push_back(StringView(application->name()));
        }
      }
    }
  }
  std::ostringstream out;
  out << "node " << name << " (hostname "
      << (node.hostname() == nullptr ? "none" : StringView(node.hostname()))
      << ", port " << node.port() << ")\n";
  for (const auto& [title, lines] :
       {std::pair{"sends", &sends}, std::pair{"receives", &receives}}) {
    out << "  " << title << " (" << lines->size() << "):\n";
    for (const std::string& line : *lines) out << "    " << line << "\n";
  }
  out << "  applications (" << applications.size()
      << "): " << StrJoin(applications, ", ") << "\n";
  return out.str();
}

}  // namespace aos
