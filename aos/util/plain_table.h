#ifndef AOS_UTIL_PLAIN_TABLE_H_
#define AOS_UTIL_PLAIN_TABLE_H_

// A table for people in a plain terminal: columns separated by two spaces,
// the first left-aligned, the others right-aligned, each row indented by two
// spaces, trailing spaces trimmed.
//
//   PlainTable table;
//   table.AddRow({"callback", "count"});
//   table.AddRow({"timer ping", "100"});
//   table.Print(&std::cout);

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "aos/util/display_width.h"

namespace aos {

class PlainTable {
 public:
  // kLeft: the last column is left-aligned too, for free text after the
  // figures (a route, a note).
  enum class LastColumn { kRight, kLeft };
  explicit PlainTable(LastColumn last = LastColumn::kRight) : last_(last) {}

  // Rows may have different lengths; a short row leaves its last columns
  // empty.
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  // Writes every row, each ending in '\n'.
  void Print(std::ostream* out) const {
    std::vector<size_t> widths;
    for (const auto& row : rows_) {
      widths.resize(std::max(widths.size(), row.size()), 0);
      for (size_t i = 0; i < row.size(); ++i) {
        widths[i] = std::max(widths[i], DisplayWidth(row[i]));
      }
    }
    for (const auto& row : rows_) {
      std::string line = "  ";
      for (size_t i = 0; i < row.size(); ++i) {
        const std::string padding(widths[i] - DisplayWidth(row[i]), ' ');
        if (i == 0) {
          line += row[i] + padding;
        } else if (last_ == LastColumn::kLeft && i + 1 == widths.size()) {
          line += "  " + row[i];
        } else {
          line += "  " + padding + row[i];
        }
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      *out << line << "\n";
    }
  }

 private:
  LastColumn last_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace aos

#endif  // AOS_UTIL_PLAIN_TABLE_H_
