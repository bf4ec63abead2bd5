#include "aos/tools/node_summary.h"

#include <sstream>
#include <string_view>
#include <vector>

#include "aos/util/str_cat.h"

namespace aos {
namespace {

std::string_view View(const flatbuffers::String* s) {
  return s == nullptr ? std::string_view() : s->string_view();
}

std::string DescribeConnection(const aos::Connection& connection) {
  if (connection.time_to_live() == 0) {
    return StrCat(View(connection.name()), " (reliable)");
  }
  return StrCat(View(connection.name()), " (best effort, time to live ",
                connection.time_to_live() / 1'000'000.0, " ms)");
}

}  // namespace

std::string DescribeNode(const Configuration& config, const Node& node) {
  const std::string_view name = View(node.name());
  std::vector<std::string> sends;
  std::vector<std::string> receives;
  if (config.channels() != nullptr) {
    for (const Channel* channel : *config.channels()) {
      const std::string what =
          StrCat(View(channel->name()), " ", View(channel->type()));
      if (View(channel->source_node()) == name) {
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
        if (View(c->name()) == name) {
          receives.push_back(
              StrCat(what, " <- ", View(channel->source_node())));
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
          applications.push_back(View(application->name()));
        }
      }
    }
  }
  std::ostringstream out;
  out << "node " << name << " (hostname "
      << (node.hostname() == nullptr ? "none" : View(node.hostname()))
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
