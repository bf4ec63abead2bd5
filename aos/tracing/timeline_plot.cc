#include "aos/tracing/timeline_plot.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "aos/tracing/chrome_trace_reader.h"
#include "aos/util/gnuplot.h"
#include "aos/util/str_cat.h"

namespace aos::tracing {
namespace {

// A name inside a gnuplot data block: in double quotes, so none in it.
std::string DataText(std::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    quoted += c == '"' ? '\'' : (byte < 0x20 || byte == 0x7f) ? '?' : c;
  }
  return quoted + "\"";
}

// A process's colour as gnuplot's `lc rgb variable` integer; grey for -1.
long ColorValue(int process) {
  if (process < 0) return 0xa0a0a0;
  const std::string_view color =
      kPlotColors[static_cast<size_t>(process) % std::size(kPlotColors)];
  return std::strtol(std::string(color.substr(1)).c_str(), nullptr, 16);
}

// N of a loop's process name "ping (pid N)"; 0 if it has none.
int64_t LoopPid(std::string_view process_name) {
  constexpr std::string_view kPid = " (pid ";
  const size_t at = process_name.rfind(kPid);
  if (at == std::string_view::npos || !process_name.ends_with(')')) return 0;
  return std::strtoll(
      std::string(process_name.substr(at + kPid.size())).c_str(), nullptr, 10);
}

// The longest row label, in characters (at most 70).
size_t LabelWidth(const Timeline& timeline) {
  size_t width = 10;
  for (const std::string& row : timeline.rows)
    width = std::max(width, row.size());
  return std::min<size_t>(width, 70);
}

}  // namespace

absl::StatusOr<Timeline> ReadTimeline(const std::string& path) {
  absl::StatusOr<Trace> trace = ReadTrace(path);
  if (!trace.ok()) return trace.status();
  return TimelineOf(*trace);
}

Timeline TimelineOf(const Trace& trace) {
  Timeline timeline;
  timeline.reason = trace.info.reason;
  timeline.window_begin_us = static_cast<double>(trace.window.begin_ns) / 1e3;
  timeline.window_end_us = static_cast<double>(trace.window.end_ns) / 1e3;
  timeline.zero_us =
      static_cast<double>(trace.info.trigger_ns != 0 ? trace.info.trigger_ns
                                                     : trace.window.begin_ns) /
      1e3;
  std::map<int64_t, std::string> processes;
  std::map<std::pair<int64_t, int64_t>, std::string> threads;
  // (pid, tid) of each bar and mark, then numbered in (pid, tid) order.
  std::map<std::pair<int64_t, int64_t>, int> used;
  // Bars with their track and, for a kernel CPU's stretch, its task's pid.
  struct Bar {
    std::pair<int64_t, int64_t> track;
    TimelineBar bar;
    int64_t task_pid;
  };
  std::vector<Bar> bars;
  std::vector<std::pair<std::pair<int64_t, int64_t>, TimelineMark>> marks;
  for (const TraceEvent& event : trace.events) {
    const std::pair<int64_t, int64_t> track{event.pid, event.tid};
    if (event.phase == 'M') {
      if (event.name == "process_name") processes[event.pid] = event.text_arg;
      if (event.name == "thread_name") threads[track] = event.text_arg;
      continue;
    }
    if (event.phase != 'X' && event.phase != 'i') continue;  // Flows.
    const double ts_us = static_cast<double>(event.ts_ns) / 1e3;
    used[track] = 0;
    if (event.phase == 'i') {
      marks.push_back({track, TimelineMark{0, ts_us, event.name}});
      continue;
    }
    // A kernel CPU's stretch names its task's pid.
    int64_t task_pid = 0;
    for (const auto& [key, value] : event.args) {
      if (key == "pid") task_pid = value;
    }
    bars.push_back(Bar{
        track,
        TimelineBar{0, ts_us, ts_us + static_cast<double>(event.dur_ns) / 1e3,
                    event.name},
        task_pid});
  }
  std::map<int64_t, int> process_index;
  for (auto& [track, row] : used) {
    row = static_cast<int>(timeline.rows.size());
    const auto process = processes.find(track.first);
    const auto thread = threads.find(track);
    timeline.rows.push_back(
        StrCat(process == processes.end() ? StrCat("pid ", track.first)
                                          : process->second,
               ": ",
               thread == threads.end() ? StrCat("tid ", track.second)
                                       : thread->second));
    const int index = static_cast<int>(process_index.size());
    timeline.row_process.push_back(
        process_index.emplace(track.first, index).first->second);
  }
  // Loop pid -> its process's colour.
  std::map<int64_t, int> loop_colors;
  for (const auto& [pid, name] : processes) {
    const auto index = process_index.find(pid);
    if (LoopPid(name) != 0 && index != process_index.end()) {
      loop_colors[LoopPid(name)] = index->second;
    }
  }
  for (Bar& bar : bars) {
    bar.bar.row = used[bar.track];
    if (bar.task_pid != 0) {
      const auto loop = loop_colors.find(bar.task_pid);
      bar.bar.process = loop == loop_colors.end() ? -1 : loop->second;
    } else {
      bar.bar.process = timeline.row_process[static_cast<size_t>(bar.bar.row)];
    }
    timeline.bars.push_back(std::move(bar.bar));
  }
  for (auto& [track, mark] : marks) {
    mark.row = used[track];
    timeline.marks.push_back(std::move(mark));
  }
  return timeline;
}

std::string TimelineScript(const Timeline& timeline,
                           const std::string& png_path, double from_ms,
                           double to_ms) {
  const double from = std::isnan(from_ms)
                          ? (timeline.window_begin_us - timeline.zero_us) / 1e3
                          : from_ms;
  const double to = std::isnan(to_ms)
                        ? (timeline.window_end_us - timeline.zero_us) / 1e3
                        : to_ms;
  const int rows = static_cast<int>(timeline.rows.size());
  // Row 0 on top.
  auto y = [rows](int row) { return rows - row; };
  auto ms = [&timeline](double us) { return (us - timeline.zero_us) / 1e3; };
  std::string script = StrCat(
      "set terminal png size 1200,", 160 + 26 * std::max(rows, 1),
      " noenhanced font ',9'\n", "set output ", GnuplotQuoted(png_path), "\n",
      "set title ",
      GnuplotQuoted(StrCat("aos_trace snapshot: ", timeline.reason)), "\n",
      "set xlabel ",
      GnuplotQuoted(timeline.zero_us == timeline.window_begin_us
                        ? "ms from the window's start"
                        : "ms from the trigger"),
      "\n", "set xrange [", from, ":", to, "]\n",
      "set yrange [0.4:", rows + 0.6, "]\n", "set grid xtics\nunset key\n",
      "set lmargin ", LabelWidth(timeline) + 2, "\n",
      "set style fill solid 0.85 border lc rgb '#404040'\n");
  StrAppend(&script, "set ytics (");
  for (int row = 0; row < rows; ++row) {
    StrAppend(&script, row == 0 ? "" : ", ",
              GnuplotQuoted(timeline.rows[static_cast<size_t>(row)]), " ",
              y(row));
  }
  StrAppend(&script, ")\n");
  if (timeline.zero_us != timeline.window_begin_us) {
    StrAppend(&script,
              "set arrow from 0, graph 0 to 0, graph 1 nohead dt 2 lc rgb "
              "'#d62728'\n");
  }
  // x center, y, half width, half height, colour; then labels; then marks.
  StrAppend(&script, "$bars << EOD\n");
  for (const TimelineBar& bar : timeline.bars) {
    const double begin = ms(bar.begin_us);
    const double end = ms(bar.end_us);
    if (end < from || begin > to) continue;
    StrAppend(&script, (begin + end) / 2, " ", y(bar.row), " ",
              (end - begin) / 2, " 0.32 ", ColorValue(bar.process), "\n");
  }
  StrAppend(&script, "EOD\n$labels << EOD\n");
  for (const TimelineBar& bar : timeline.bars) {
    // Named inside if what shows of it is a tenth of the range.
    const double begin = std::max(ms(bar.begin_us), from);
    const double end = std::min(ms(bar.end_us), to);
    if (end - begin < (to - from) / 10) continue;
    StrAppend(&script, (begin + end) / 2, " ", y(bar.row), " ",
              DataText(bar.name), "\n");
  }
  StrAppend(&script, "EOD\n$marks << EOD\n");
  for (const TimelineMark& mark : timeline.marks) {
    const double at = ms(mark.at_us);
    if (at < from || at > to) continue;
    StrAppend(&script, at, " ", y(mark.row) + 0.42, "\n");
  }
  StrAppend(&script,
            "EOD\n"
            "plot $bars using 1:2:3:4:5 with boxxyerror lc rgb variable, \\\n"
            "     $marks using 1:2 with points pt 9 ps 0.9 lc rgb '#202020', "
            "\\\n"
            "     $labels using 1:2:3 with labels tc rgb '#101010'\n");
  return script;
}

absl::Status WriteTimelinePlot(const Timeline& timeline,
                               const std::string& png_path, double from_ms,
                               double to_ms) {
  const std::string script = TimelineScript(timeline, png_path, from_ms, to_ms);
  return RunGnuplotScript(script, png_path);
}

}  // namespace aos::tracing
