// Text edits of the operator's TOML config that keep the rest of the file as it is. Where a table starts
// and which value sits where comes from toml++ (the parser the server uses), never from a second parser.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace gslb::ctl {

/// The 1-based lines where a table header ([x] or [[x]]) stands, sorted. False with `error`
/// ("path:line: message") when the text is not TOML.
bool tomlHeaderLines(const std::string& text, const std::string& path, std::vector<int>& lines,
                     std::string& error);

/// The block of the table whose header is on line `header`: from the header to the line before the next
/// header (or the end of the file), without the blank and comment-only lines that end it (they introduce
/// what follows). Returns {first, last}, 1-based, inclusive.
std::pair<int, int> tomlBlock(const std::string& text, const std::vector<int>& headers, int header);

/// `text` without lines [first, last] (1-based, inclusive).
std::string removeLines(const std::string& text, int first, int last);

/// `text` with `insert` (whole lines) placed after line `line` (0: at the start); a line end is added to a
/// last line that lacks one.
std::string insertAfterLine(const std::string& text, int line, const std::string& insert);

/// A TOML basic string: "…" with \\ and \" escaped.
std::string tomlQuote(const std::string& s);

/// `text` with the string value of `[[zone]]` number `index` (0-based) key `key` replaced by `value`
/// (written as a basic string), located through toml++'s source positions. False when not found.
bool replaceZoneValue(const std::string& text, size_t index, const std::string& key, const std::string& value,
                      std::string& out);

}  // namespace gslb::ctl
