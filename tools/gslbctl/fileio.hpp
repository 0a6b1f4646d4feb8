// Whole-file reads and atomic replacement: a temp file in the same directory, fsync, rename, fsync of the
// directory; the original's permissions are kept. Nothing touches the target until commit().
#pragma once
#include <string>

#include "zones/read_file.hpp"

namespace gslb::ctl {

/// Reads `path` whole. False with `error` ("path: cannot open: why") when it cannot (zones/read_file.hpp).
using zones::readFile;

/// A candidate replacement for `target`, written and fsynced next to it (".NAME.gslbctl-XXXXXX").
class TempFile {
  public:
    TempFile() = default;
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile();  // removes the temp file unless it was committed

    /// Writes `text` to a new temp file beside `target` (whose mode it copies when `target` exists; 0644
    /// otherwise). False with `error` on any I/O failure.
    bool write(const std::string& target, const std::string& text, std::string& error);
    const std::string& path() const { return path_; }
    /// Renames the temp file over the target (atomic) and syncs the directory.
    bool commit(std::string& error);
    /// Like commit() but fails with EEXIST when the target exists (link + unlink): for new files.
    bool commitNew(std::string& error);

  private:
    std::string target_, path_;
    bool done_ = false;
};

/// The directory of `path` ("." when it has none).
std::string dirName(const std::string& path);

}  // namespace gslb::ctl
