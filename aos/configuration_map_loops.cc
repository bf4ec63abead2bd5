#include "aos/configuration_map_loops.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "aos/configuration_lookup.h"
#include "aos/configuration_maps.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos::configuration {
namespace {

constexpr int kGlobal = -1;
// Stands for a match type written as "" (no type is an empty view).
// ("\x01" "empty": a hex escape would swallow the e.)
constexpr std::string_view kEmptyType(
    "\x01"
    "empty type",
    11);

// One map, with what matching it needs.
struct MapInfo {
  const Map* map;
  // kGlobal, or the index of the application that owns it.
  int owner;
  std::string_view node;
  std::string_view type;
  // The match name without its trailing '*'.
  std::string_view match;
  bool wildcard;
  std::string_view rename;
  const std::string* file;

  // Who may see it: an application's map, or one naming a node.
  bool specific() const { return owner != kGlobal || !node.empty(); }
  std::string Apply(std::string_view name) const {
    return wildcard ? StrCat(rename, name.substr(match.size()))
                    : std::string(rename);
  }
};

// A name on a config-wide chain: where the chain goes, the next name on it
// that a specific map could rename (empty if none) and how far that is, how
// far the chain goes until it settles, and the longest way to the name from
// a map's match name.
struct ChainEntry {
  std::string_view successor;
  std::string_view next_specific;
  size_t to_next_specific = 0;
  size_t to_settle = 0;
  size_t longest_from_start = 0;
};

class MapLoopChecker {
  using MapsByMatch =
      std::unordered_map<std::string, std::vector<const MapInfo*>>;

 public:
  MapLoopChecker(const Configuration& config, const ConfigSources& sources)
      : config_(config), root_file_(sources.root_file) {
    auto add = [&](const Map* map, int owner, const std::string* file) {
      const Channel& match_channel = *map->match();
      // A source_node of "" names no node, so the map never applies.
      if (match_channel.source_node() != nullptr &&
          match_channel.source_node()->size() == 0) {
        return;
      }
      std::string_view match = StringView(match_channel.name());
      const bool wildcard = match.ends_with('*');
      if (wildcard) match.remove_suffix(1);
      // A type of "" matches only a query of type "", unlike no type.
      const std::string_view type =
          match_channel.type() != nullptr && match_channel.type()->size() == 0
              ? kEmptyType
              : StringView(match_channel.type());
      maps_.push_back({map, owner, StringView(match_channel.source_node()),
                       type, match, wildcard, StringView(map->rename()->name()),
                       file});
    };
    if (config.maps() != nullptr) {
      for (size_t i = 0; i < config.maps()->size(); ++i) {
        add(config.maps()->Get(i), kGlobal, &sources.map_files[i]);
        ++global_maps_;
      }
    }
    if (config.applications() != nullptr) {
      for (size_t i = 0; i < config.applications()->size(); ++i) {
        const Application* application = config.applications()->Get(i);
        if (application->maps() == nullptr) continue;
        for (const Map* map : *application->maps()) {
          add(map, static_cast<int>(i), &sources.application_files[i]);
        }
      }
    }
    std::set<size_t> lengths;
    for (const MapInfo& info : maps_) {
      file_of_[info.map] = info.file;
      // In order, so the last map of each key wins, as in lookup.
      last_[Key(info.owner, info.node, info.type, info.wildcard, info.match)] =
          &info;
      if (info.wildcard) lengths.insert(info.match.size());
      const std::string by_match =
          Key(kGlobal, "", info.type, info.wildcard, info.match);
      if (info.specific()) specific_[by_match].push_back(&info);
      if (info.owner != kGlobal) application_maps_[by_match].push_back(&info);
      if (!info.node.empty()) node_maps_[by_match].push_back(&info);
      types_.insert(StartType(info));
    }
    prefix_lengths_.assign(lengths.begin(), lengths.end());
    if (config.nodes() != nullptr) {
      for (const Node* node : *config.nodes()) {
        nodes_.emplace(StringView(node->name()), node);
      }
    }
  }

  absl::Status Check() {
    for (std::string_view type : types_) {
      if (absl::Status status = CheckType(type); !status.ok()) return status;
    }
    return absl::OkStatus();
  }

 private:
  static std::string Key(int owner, std::string_view node,
                         std::string_view type, bool wildcard,
                         std::string_view match) {
    const std::string_view separator("\0", 1);
    return StrCat(owner, separator, node, separator, type, separator,
                  wildcard ? "*" : "=", match);
  }

  // The type a walk from `info`'s match name asks with: its match type.
  static std::string_view StartType(const MapInfo& info) {
    return info.type == kEmptyType ? std::string_view() : info.type;
  }

  std::string_view Intern(std::string name) {
    return *names_.insert(std::move(name)).first;
  }

  // Calls fn(key) for the keys of every map of `owner` that could match
  // `name` asked with `type` on `node` (empty: none).
  template <typename Fn>
  void ForEachKey(int owner, std::string_view node, std::string_view type,
                  std::string_view name, Fn fn) const {
    // A query of type "" also matches maps whose type is written as "".
    const std::string_view typed = type.empty() ? kEmptyType : type;
    for (std::string_view map_node : {std::string_view(), node}) {
      for (std::string_view map_type : {std::string_view(), typed}) {
        fn(Key(owner, map_node, map_type, false, name));
        for (size_t length : prefix_lengths_) {
          if (length > name.size()) break;
          fn(Key(owner, map_node, map_type, true, name.substr(0, length)));
        }
      }
      if (node.empty()) break;
    }
  }

  // The map that renames `name` for application `owner` (or kGlobal) on
  // `node`, asked with `type`: the application's last matching map, else
  // the config's. Null when none does.
  const MapInfo* Next(int owner, std::string_view node, std::string_view type,
                      std::string_view name) const {
    for (int who : {owner, kGlobal}) {
      const MapInfo* best = nullptr;
      ForEachKey(who, node, type, name, [&](const std::string& key) {
        auto it = last_.find(key);
        if (it != last_.end() && (best == nullptr || it->second > best)) {
          best = it->second;
        }
      });
      if (best != nullptr) return best;
      if (who == kGlobal) break;
    }
    return nullptr;
  }

  // Calls fn(map) for every map of `index` that could rename `name` (asked
  // with `type`) for some application or node.
  template <typename Fn>
  void ForEachIn(const MapsByMatch& index, std::string_view type,
                 std::string_view name, Fn fn) const {
    ForEachKey(kGlobal, "", type, name, [&](const std::string& key) {
      auto it = index.find(key);
      if (it == index.end()) return;
      for (const MapInfo* info : it->second) fn(info);
    });
  }

  bool Specific(std::string_view type, std::string_view name) const {
    bool found = false;
    ForEachKey(kGlobal, "", type, name, [&](const std::string& key) {
      found = found || specific_.contains(key);
    });
    return found;
  }

  // The loop message, from MapChain (which lookup uses) so it reads the same
  // as what an application would see.
  absl::Status LoopError(std::string_view start, std::string_view type,
                         int owner, std::string_view node_name) const {
    const std::string_view application =
        owner == kGlobal
            ? std::string_view()
            : StringView(config_.applications()->Get(owner)->name());
    const Node* node = node_name.empty() ? nullptr : nodes_.at(node_name);
    const std::vector<MapStep> chain =
        MapChain(config_, start, type, application, node);
    std::vector<std::string> names = {InlinePrintable(start)};
    for (const MapStep& step : chain) {
      names.push_back(InlinePrintable(step.name));
    }
    const std::string& file =
        chain.empty() ? root_file_ : *file_of_.at(chain.front().map);
    return absl::InvalidArgumentError(StrCat(
        file, ": maps loop: ", StrJoin(names, " -> "),
        application.empty()
            ? std::string()
            : StrCat(" (for application ", InlinePrintable(application), ")"),
        node == nullptr
            ? std::string()
            : StrCat(" (on node ", InlinePrintable(node_name), ")")));
  }

  // Follows the config-wide chain from `start`, remembering every name on it
  // in chains_; adds the names a specific map could rename to `touched`.
  // Exact: fails as MapChain would for no application and no node.
  absl::Status WalkConfigWide(std::string_view type, std::string_view start,
                              std::vector<std::string_view>* touched) {
    std::vector<std::string_view> path;
    std::unordered_set<std::string_view> on_path;
    std::string_view name = start;
    const ChainEntry* tail = nullptr;
    while (true) {
      if (auto it = chains_.find(name); it != chains_.end()) {
        tail = &it->second;
        break;
      }
      if (!on_path.insert(name).second || path.size() > global_maps_) {
        return LoopError(start, type, kGlobal, "");
      }
      path.push_back(name);
      const MapInfo* map = Next(kGlobal, "", type, name);
      if (map == nullptr) break;
      std::string renamed = map->Apply(name);
      if (renamed == name) break;
      name = Intern(std::move(renamed));
    }
    // Fill in backwards: each name's entry follows from its successor's.
    bool has_successor = tail != nullptr;
    std::string_view successor = name;
    ChainEntry successor_entry = has_successor ? *tail : ChainEntry{};
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      ChainEntry entry;
      if (has_successor) {
        entry.successor = successor;
        entry.to_settle = successor_entry.to_settle + 1;
        if (Specific(type, successor)) {
          entry.next_specific = successor;
          entry.to_next_specific = 1;
        } else {
          entry.next_specific = successor_entry.next_specific;
          entry.to_next_specific = successor_entry.to_next_specific + 1;
        }
      }
      chains_.emplace(*it, entry);
      if (Specific(type, *it)) touched->push_back(*it);
      successor = *it;
      successor_entry = entry;
      has_successor = true;
    }
    if (chains_.at(start).to_settle > global_maps_) {
      return LoopError(start, type, kGlobal, "");
    }
    return absl::OkStatus();
  }

  // Sets each remembered name's longest_from_start: chains_ is a forest
  // whose leaves are map match names, so one pass in topological order.
  void MeasureLongestFromStart() {
    std::unordered_map<std::string_view, size_t> waiting;
    for (const auto& [name, entry] : chains_) {
      if (!entry.successor.empty()) ++waiting[entry.successor];
    }
    std::vector<std::string_view> ready;
    for (const auto& [name, entry] : chains_) {
      if (!waiting.contains(name)) ready.push_back(name);
    }
    while (!ready.empty()) {
      const std::string_view name = ready.back();
      ready.pop_back();
      const ChainEntry& entry = chains_.at(name);
      if (entry.successor.empty()) continue;
      ChainEntry& next = chains_.at(entry.successor);
      next.longest_from_start =
          std::max(next.longest_from_start, entry.longest_from_start + 1);
      if (--waiting[entry.successor] == 0) ready.push_back(entry.successor);
    }
  }

  // Follows renaming for application `owner` on `node` from `start`,
  // skipping along config-wide chains where no map of theirs applies.
  // Returns false when renaming may not settle: a name came back, or the
  // chain, counted from the farthest map match name that leads to `start`,
  // may be longer than MapChain allows. `settled` holds names already
  // followed in this context and how many renames they take to settle;
  // the names followed are appended to `visited` (if given).
  bool WalkFor(int owner, std::string_view node, std::string_view type,
               std::string_view start,
               std::unordered_map<std::string_view, size_t>* settled,
               std::vector<std::string_view>* visited) {
    const size_t limit = ChainLimit(owner);
    std::vector<std::pair<std::string_view, size_t>> path;
    std::unordered_set<std::string_view> on_path;
    std::string_view name = start;
    auto chain = chains_.find(start);
    size_t renames =
        chain == chains_.end() ? 0 : chain->second.longest_from_start;
    while (true) {
      if (auto done = settled->find(name); done != settled->end()) {
        renames += done->second;
        break;
      }
      if (!on_path.insert(name).second || renames > limit) return false;
      path.emplace_back(name, renames);
      const MapInfo* map = Next(owner, node, type, name);
      chain = chains_.find(name);
      if (chain != chains_.end() && map == Next(kGlobal, "", type, name)) {
        if (chain->second.next_specific.empty()) {
          renames += chain->second.to_settle;
          break;
        }
        renames += chain->second.to_next_specific;
        name = chain->second.next_specific;
        continue;
      }
      if (map == nullptr) break;
      std::string renamed = map->Apply(name);
      if (renamed == name) break;
      name = Intern(std::move(renamed));
      ++renames;
    }
    if (renames > limit) return false;
    for (const auto& [on_chain, at] : path) {
      settled->emplace(on_chain, renames - at);
      if (visited != nullptr) visited->push_back(on_chain);
    }
    return true;
  }

  // How many renames MapChain allows the application `owner` (or kGlobal).
  size_t ChainLimit(int owner) const {
    if (owner == kGlobal) return global_maps_;
    const Application* application = config_.applications()->Get(owner);
    return global_maps_ +
           (application->maps() == nullptr ? 0 : application->maps()->size());
  }

  // The literal check, for one application, node and type: every map match
  // name of the type, followed with MapChain. Used only to confirm what
  // WalkFor could not rule out.
  absl::Status CheckLiterally(int owner, std::string_view node,
                              std::string_view type) const {
    const std::string_view application =
        owner == kGlobal
            ? std::string_view()
            : StringView(config_.applications()->Get(owner)->name());
    const Node* node_pointer = node.empty() ? nullptr : nodes_.at(node);
    for (const MapInfo& info : maps_) {
      if (StartType(info) != type) continue;
      bool looped = false;
      MapChain(config_, info.match, type, application, node_pointer, &looped);
      if (looped) return LoopError(info.match, type, owner, node);
    }
    return absl::OkStatus();
  }

  absl::Status CheckType(std::string_view type) {
    chains_.clear();
    std::vector<std::string_view> touched;
    for (const MapInfo& info : maps_) {
      if (StartType(info) != type) continue;
      if (absl::Status status =
              WalkConfigWide(type, Intern(std::string(info.match)), &touched);
          !status.ok()) {
        return status;
      }
    }
    MeasureLongestFromStart();
    // Where each application and node must start: the names on config-wide
    // chains that their own maps may rename.
    std::map<std::pair<int, std::string_view>, std::vector<std::string_view>>
        starts;
    std::set<std::pair<std::pair<int, std::string_view>, std::string_view>>
        added;
    for (std::string_view name : touched) {
      ForEachIn(specific_, type, name, [&](const MapInfo* info) {
        if (!info->node.empty() && !nodes_.contains(info->node)) return;
        const std::pair<int, std::string_view> who = {info->owner, info->node};
        if (added.insert({who, name}).second) starts[who].push_back(name);
      });
    }
    // Every application with maps of this type and every node that maps
    // name: a loop may need both, though only one's maps touch the
    // config-wide chains.
    // Each application alone, then each node alone, remembering the names
    // their chains pass.
    auto walk =
        [&](int owner, std::string_view node,
            std::initializer_list<std::pair<int, std::string_view>> keys,
            std::vector<std::string_view>* visited) -> absl::Status {
      std::unordered_map<std::string_view, size_t> settled;
      for (const auto& key : keys) {
        auto it = starts.find(key);
        if (it == starts.end()) continue;
        for (std::string_view name : it->second) {
          if (!WalkFor(owner, node, type, name, &settled, visited)) {
            return CheckLiterally(owner, node, type);
          }
        }
      }
      return absl::OkStatus();
    };
    std::map<int, std::vector<std::string_view>> by_application;
    std::map<std::string_view, std::vector<std::string_view>> by_node;
    for (const auto& [who, names] : starts) {
      if (who.first != kGlobal && who.second.empty()) {
        by_application[who.first];
      } else if (who.first == kGlobal) {
        by_node[who.second];
      }
    }
    for (auto& [owner, visited] : by_application) {
      if (absl::Status status = walk(owner, "", {{owner, ""}}, &visited);
          !status.ok()) {
        return status;
      }
    }
    for (auto& [node, visited] : by_node) {
      if (absl::Status status =
              walk(kGlobal, node, {{kGlobal, node}}, &visited);
          !status.ok()) {
        return status;
      }
    }
    // An application and a node together can only differ from each alone
    // where the chain of one passes a name the other's maps rename (or
    // where a map of the application names the node).
    std::set<std::pair<int, std::string_view>> pairs;
    for (const auto& [who, names] : starts) {
      if (who.first != kGlobal && !who.second.empty()) pairs.insert(who);
    }
    // (Entries by name, not structured bindings: clang 14, which builds the
    // fuzzers, cannot capture those in a lambda.)
    for (const auto& entry : by_node) {
      const auto& node = entry.first;
      const auto& visited = entry.second;
      for (std::string_view name : visited) {
        ForEachIn(application_maps_, type, name, [&](const MapInfo* info) {
          if (info->node.empty() || info->node == node) {
            pairs.insert({info->owner, node});
          }
        });
      }
    }
    for (const auto& entry : by_application) {
      const auto& owner = entry.first;
      const auto& visited = entry.second;
      for (std::string_view name : visited) {
        ForEachIn(node_maps_, type, name, [&](const MapInfo* info) {
          if ((info->owner == kGlobal || info->owner == owner) &&
              nodes_.contains(info->node)) {
            pairs.insert({owner, info->node});
          }
        });
      }
    }
    for (const auto& [owner, node] : pairs) {
      if (absl::Status status =
              walk(owner, node, {{owner, node}, {owner, ""}, {kGlobal, node}},
                   nullptr);
          !status.ok()) {
        return status;
      }
    }
    return absl::OkStatus();
  }

  const Configuration& config_;
  std::vector<MapInfo> maps_;
  size_t global_maps_ = 0;
  std::unordered_map<const Map*, const std::string*> file_of_;
  std::unordered_map<std::string, const MapInfo*> last_;
  // Maps by (type, match), ignoring owner and node: those that are
  // specific, those of applications, those naming a node.
  MapsByMatch specific_;
  MapsByMatch application_maps_;
  MapsByMatch node_maps_;
  std::vector<size_t> prefix_lengths_;
  std::set<std::string_view> types_;
  std::unordered_map<std::string_view, const Node*> nodes_;
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string_view, ChainEntry> chains_;
  const std::string root_file_;
};

}  // namespace

absl::Status ValidateMapLoops(const Configuration& config,
                              const ConfigSources& sources) {
  return MapLoopChecker(config, sources).Check();
}

}  // namespace aos::configuration
