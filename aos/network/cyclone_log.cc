#include "aos/network/cyclone_log.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>

#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "dds/ddsrt/log.h"

namespace aos::message_bridge {
namespace {

thread_local CycloneLogCapture* capture = nullptr;

std::mutex& SinkMutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

LineRateLimit& SinkLimit() {
  static LineRateLimit* limit =
      new LineRateLimit(kCycloneLogBurst, kCycloneLogPeriod);
  return *limit;
}

// Prints one of Cyclone's lines on stderr, if the rate limit lets it.
void Print(std::string_view message) {
  std::lock_guard<std::mutex> lock(SinkMutex());
  uint64_t held_back = 0;
  if (!SinkLimit().Admit(std::chrono::steady_clock::now(), &held_back)) {
    return;
  }
  const std::string line =
      CycloneLogLine(program_invocation_short_name, message, held_back);
  // One write: lines of other threads do not cut into it.
  [[maybe_unused]] ssize_t written =
      write(STDERR_FILENO, line.data(), line.size());
}

// Cyclone's log and trace sink, in whichever thread logs.
void Sink(void*, const dds_log_data_t* data) {
  const std::string_view message(data->message, data->size);
  if (capture != nullptr) {
    capture->Add(message);
    return;
  }
  Print(message);
}

}  // namespace

LineRateLimit::LineRateLimit(size_t burst, std::chrono::nanoseconds period)
    : burst_(std::clamp<size_t>(burst, 1, kMaxBurst)), period_(period) {}

bool LineRateLimit::Admit(std::chrono::steady_clock::time_point now,
                          uint64_t* held_back) {
  if (count_ == burst_ && now - admitted_[next_] < period_) {
    ++held_back_;
    return false;
  }
  admitted_[next_] = now;
  next_ = (next_ + 1) % burst_;
  if (count_ < burst_) ++count_;
  *held_back = held_back_;
  held_back_ = 0;
  return true;
}

std::string CycloneLogLine(std::string_view program, std::string_view message,
                           uint64_t held_back) {
  // Cyclone ends some lines with a newline of its own.
  while (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  std::string line =
      StrCat(program,
             ": Cyclone DDS: ", Printable(message, kCycloneLogMaxMessageBytes));
  if (held_back > 0) {
    line += StrCat(" (", held_back, " more Cyclone DDS lines not shown)");
  }
  line += "\n";
  return line;
}

void InstallCycloneLog() {
  static std::once_flag installed;
  std::call_once(installed, []() {
    dds_set_log_sink(&Sink, nullptr);
    dds_set_trace_sink(&Sink, nullptr);
  });
}

CycloneLogCapture::CycloneLogCapture() { capture = this; }

CycloneLogCapture::~CycloneLogCapture() { capture = nullptr; }

void CycloneLogCapture::Add(std::string_view message) {
  while (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  ++total_;
  if (raw_.size() < kMaxLines) {
    raw_.emplace_back(message.substr(0, kMaxRawBytes));
  }
}

std::vector<std::string> CycloneLogCapture::lines() const {
  std::vector<std::string> lines;
  for (const std::string& raw : raw_) {
    lines.push_back(Printable(raw, kCycloneLogMaxMessageBytes));
  }
  return lines;
}

void CycloneLogCapture::Release() {
  for (const std::string& raw : raw_) Print(raw);
  raw_.clear();
  total_ = 0;
}

std::string CycloneLogCapture::Summary() const {
  if (raw_.empty()) return "Cyclone DDS said nothing";
  const std::vector<std::string> escaped = lines();
  std::string summary = "Cyclone DDS said ";
  for (size_t i = 0; i < escaped.size() && i < kSummaryLines; ++i) {
    if (i > 0) summary += "; ";
    summary += escaped[i];
  }
  if (total_ > kSummaryLines) {
    summary += StrCat("; and ", total_ - kSummaryLines, " more lines");
  }
  return summary;
}

}  // namespace aos::message_bridge
