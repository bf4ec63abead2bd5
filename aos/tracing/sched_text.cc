#include "aos/tracing/sched_text.h"

#include <charconv>
#include <optional>

#include "aos/util/str_cat.h"

namespace aos::tracing {
namespace {

// The decimal integer at the start of `text`, all of it.
std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// "39093.225162" (seconds, any number of decimals up to 9) in ns.
std::optional<int64_t> ParseSeconds(std::string_view text) {
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::optional<int64_t> seconds = ParseInt(text.substr(0, dot));
  std::string_view fraction = text.substr(dot + 1);
  // No sign, and few enough seconds for ns to fit (292 years).
  if (!seconds || *seconds < 0 || *seconds > 9'000'000'000 ||
      text.starts_with('-') || fraction.empty() || fraction.size() > 9 ||
      fraction.starts_with('-') || fraction.starts_with('+')) {
    return std::nullopt;
  }
  std::optional<int64_t> digits = ParseInt(fraction);
  if (!digits || *digits < 0) return std::nullopt;
  int64_t scale = 1;
  for (size_t i = fraction.size(); i < 9; ++i) scale *= 10;
  return *seconds * 1'000'000'000 + *digits * scale;
}

// The value of `key=` in `fields`, searched from `from`, up to the next
// space (or the end). Empty if absent.
std::string_view Field(std::string_view fields, std::string_view key,
                       size_t from = 0) {
  const size_t at = fields.find(key, from);
  if (at == std::string_view::npos) return {};
  const size_t begin = at + key.size();
  const size_t end = fields.find(' ', begin);
  return fields.substr(begin, end == std::string_view::npos
                                  ? std::string_view::npos
                                  : end - begin);
}

std::optional<int> IntField(std::string_view fields, std::string_view key,
                            size_t from = 0) {
  const std::optional<int64_t> value = ParseInt(Field(fields, key, from));
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

// "prev_comm=a b prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=c
// next_pid=2 next_prio=94". A comm may hold spaces, so each is cut at the
// key that follows it.
bool ParseSwitch(std::string_view fields, SchedEvent* event) {
  constexpr std::string_view kPrevComm = "prev_comm=";
  const size_t arrow = fields.rfind(" ==> next_comm=");
  const size_t prev_pid = fields.rfind(" prev_pid=", arrow);
  if (!fields.starts_with(kPrevComm) || arrow == std::string_view::npos ||
      prev_pid == std::string_view::npos || prev_pid < kPrevComm.size()) {
    return false;
  }
  event->prev.comm =
      std::string(fields.substr(kPrevComm.size(), prev_pid - kPrevComm.size()));
  const std::string_view next = fields.substr(arrow + 15);
  const size_t next_pid = next.rfind(" next_pid=");
  if (next_pid == std::string_view::npos) return false;
  event->next.comm = std::string(next.substr(0, next_pid));
  const std::string_view prev = fields.substr(prev_pid, arrow - prev_pid);
  const std::optional<int> values[] = {
      IntField(prev, " prev_pid="), IntField(prev, " prev_prio="),
      IntField(next, " next_pid=", next_pid), IntField(next, " next_prio=")};
  for (const std::optional<int>& value : values) {
    if (!value) return false;
  }
  event->prev.pid = *values[0];
  event->prev.prio = *values[1];
  event->next.pid = *values[2];
  event->next.prio = *values[3];
  std::string_view state = Field(prev, " prev_state=");
  if (state.empty()) return false;
  if (state.ends_with('+')) state.remove_suffix(1);
  event->prev_state = std::string(state);
  return true;
}

// "comm=rcu_preempt pid=15 prio=120 target_cpu=001" (older kernels add
// "success=1" before target_cpu).
bool ParseWakeup(std::string_view fields, SchedEvent* event) {
  constexpr std::string_view kComm = "comm=";
  const size_t pid = fields.rfind(" pid=");
  if (!fields.starts_with(kComm) || pid == std::string_view::npos ||
      pid < kComm.size()) {
    return false;
  }
  event->next.comm =
      std::string(fields.substr(kComm.size(), pid - kComm.size()));
  const std::string_view rest = fields.substr(pid);
  const std::optional<int> values[] = {IntField(rest, " pid="),
                                       IntField(rest, " prio="),
                                       IntField(rest, " target_cpu=")};
  for (const std::optional<int>& value : values) {
    if (!value) return false;
  }
  event->next.pid = *values[0];
  event->next.prio = *values[1];
  event->cpu = *values[2];
  return true;
}

// One event line; false if it is not one we can read.
bool ParseLine(std::string_view line, SchedEvent* event) {
  constexpr std::string_view kSwitch = ": sched_switch: ";
  constexpr std::string_view kWakeup = ": sched_wakeup: ";
  size_t at = line.find(kSwitch);
  event->kind = SchedKind::kSwitch;
  if (at == std::string_view::npos) {
    at = line.find(kWakeup);
    event->kind = SchedKind::kWakeup;
  }
  if (at == std::string_view::npos) return false;
  // "... [001] d..2. 39093.225162" before the event's name.
  const std::string_view head = line.substr(0, at);
  const size_t space = head.rfind(' ');
  const size_t open = head.rfind('[');
  const size_t close = head.rfind(']');
  if (space == std::string_view::npos || open == std::string_view::npos ||
      close == std::string_view::npos || close < open || space < close) {
    return false;
  }
  const std::optional<int64_t> ns = ParseSeconds(head.substr(space + 1));
  const std::optional<int64_t> cpu =
      ParseInt(head.substr(open + 1, close - open - 1));
  if (!ns || !cpu) return false;
  event->monotonic_ns = *ns;
  event->cpu = static_cast<int>(*cpu);
  const std::string_view fields = line.substr(at + kSwitch.size());
  return event->kind == SchedKind::kSwitch ? ParseSwitch(fields, event)
                                           : ParseWakeup(fields, event);
}

// "# entries-in-buffer/entries-written: 36/40   #P:2" -> 4.
uint64_t Overwritten(std::string_view line) {
  constexpr std::string_view kKey = "entries-in-buffer/entries-written: ";
  const size_t at = line.find(kKey);
  if (at == std::string_view::npos) return 0;
  std::string_view counts = line.substr(at + kKey.size());
  counts = counts.substr(0, counts.find(' '));
  const size_t slash = counts.find('/');
  if (slash == std::string_view::npos) return 0;
  const std::optional<int64_t> kept = ParseInt(counts.substr(0, slash));
  const std::optional<int64_t> written = ParseInt(counts.substr(slash + 1));
  if (!kept || !written || *written < *kept) return 0;
  return static_cast<uint64_t>(*written - *kept);
}

}  // namespace

SchedText ParseSchedText(std::string_view text) {
  SchedText result;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.find_first_not_of(' ') == std::string_view::npos) continue;
    if (line.starts_with('#')) {
      result.overwritten += Overwritten(line);
      continue;
    }
    SchedEvent event;
    if (ParseLine(line, &event)) {
      result.events.push_back(std::move(event));
    } else {
      ++result.unparsed;
    }
  }
  return result;
}

std::string UserPriority(int kernel_prio) {
  if (kernel_prio < 100) return StrCat("rtprio ", 99 - kernel_prio);
  if (kernel_prio == 120) return "";
  return StrCat("nice ", kernel_prio - 120);
}

}  // namespace aos::tracing
