// Whole-file reads, for the files the config names (zone files, keys, state files) and gslbctl's edits: one
// helper, so every such error names the file and says why the same way.
#pragma once
#include <string>

namespace gslb::zones {

/// Reads the file at `path` whole into `out` (binary: no newline translation). False with `error` =
/// "PATH: cannot open: WHY" or "PATH: cannot read: WHY" (strerror; a directory is "cannot read: Is a
/// directory") when it cannot, and then `errno` is still open(2)'s or read(2)'s, so a caller that treats a
/// missing file as empty can test it for ENOENT.
bool readFile(const std::string& path, std::string& out, std::string& error);

}  // namespace gslb::zones
