#ifndef AOS_NETWORK_CYCLONE_LOG_H_
#define AOS_NETWORK_CYCLONE_LOG_H_

// Cyclone DDS's own log lines, escaped and rate-limited.
//
// Cyclone writes its errors and warnings to stderr by itself, and some of
// them quote what a peer sent: with DDS Security, every handshake a peer
// fails is logged with the subject of the certificate it presented, twice a
// second for as long as the peer keeps trying. Once Install() ran, every
// line Cyclone logs in this process comes here instead and is printed as
//
//   message_bridge: Cyclone DDS: "fsm: Begin handshake reply failed: ..."
//
// escaped and bounded by aos::Printable (kCycloneLogMaxMessageBytes), at
// most kCycloneLogBurst lines within any kCycloneLogPeriod; lines beyond that
// are counted, and the count is said with the next line printed ("... (37 more
// Cyclone DDS lines not shown)"). While a CycloneLogCapture lives, the lines
// Cyclone logs in its thread are kept in it instead: a program that makes a
// participant says why Cyclone refused it in its own one line.
//
//   InstallCycloneLog();
//   {
//     CycloneLogCapture capture;
//     dds_entity_t participant = dds_create_participant(...);
//     if (participant < 0) Fail(capture.Summary());
//     capture.Release();   // not an error: its warnings as usual
//   }

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aos::message_bridge {

// Which lines of a stream may be printed: at most `burst` within any
// `period`. Not thread safe. Never allocates.
class LineRateLimit {
 public:
  static constexpr size_t kMaxBurst = 64;

  // burst: 1 to kMaxBurst.
  LineRateLimit(size_t burst, std::chrono::nanoseconds period);

  // Whether a line at `now` may be printed. If so, *held_back is how many
  // were refused since the last one admitted (to be said with this one).
  // `now` must not go back.
  bool Admit(std::chrono::steady_clock::time_point now, uint64_t* held_back);

 private:
  const size_t burst_;
  const std::chrono::nanoseconds period_;
  // When the last `burst_` admitted lines were, oldest at next_ once full.
  std::array<std::chrono::steady_clock::time_point, kMaxBurst> admitted_{};
  size_t count_ = 0;
  size_t next_ = 0;
  uint64_t held_back_ = 0;
};

// At most this many lines within kPeriod reach stderr.
inline constexpr size_t kCycloneLogBurst = 10;
inline constexpr std::chrono::seconds kCycloneLogPeriod{10};
// Of each line, at most this many bytes are kept (aos::Printable).
inline constexpr size_t kCycloneLogMaxMessageBytes = 300;

// The line printed for Cyclone's `message` (without its time stamp
// header): "<program>: Cyclone DDS: <Printable(message)>", and, if
// held_back > 0, " (<held_back> more Cyclone DDS lines not shown)", and
// "\n".
std::string CycloneLogLine(std::string_view program, std::string_view message,
                           uint64_t held_back);

// Routes every line Cyclone DDS logs in this process (log and trace sinks)
// through the above, to stderr. Idempotent, any thread.
void InstallCycloneLog();

// While it lives, what Cyclone logs in the thread that made it is kept here
// (at most kMaxLines, each bounded) instead of printed. Not nestable.
class CycloneLogCapture {
 public:
  static constexpr size_t kMaxLines = 16;
  // Lines Summary() shows.
  static constexpr size_t kSummaryLines = 4;

  CycloneLogCapture();
  ~CycloneLogCapture();
  CycloneLogCapture(const CycloneLogCapture&) = delete;
  CycloneLogCapture& operator=(const CycloneLogCapture&) = delete;

  // Each line kept, escaped by aos::Printable.
  std::vector<std::string> lines() const;
  // "Cyclone DDS said " and the first kSummaryLines lines joined by "; "
  // (and how many more), or "Cyclone DDS said nothing".
  std::string Summary() const;

  // Prints the lines kept as if they had not been captured (escaped,
  // rate-limited), and forgets them: for what turned out not to be an
  // error.
  void Release();

  // For the sink.
  void Add(std::string_view message);

 private:
  // Of each line, at most this many bytes are kept.
  static constexpr size_t kMaxRawBytes = 4096;

  std::vector<std::string> raw_;
  // Lines Cyclone logged, kept or not.
  size_t total_ = 0;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_CYCLONE_LOG_H_
