// Whole-file reads, for the files the config names (zone files, DNSSEC and TSIG keys, cookie secrets, the
// control token, state files) and gslbctl's edits: one helper, so every such error names the file and says
// why the same way.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gslb::zones {

/// Reads the file at `path` whole into `out` (binary: no newline translation). False with `error` =
/// "PATH: cannot open: WHY" or "PATH: cannot read: WHY" (strerror; a directory is "cannot read: Is a
/// directory") when it cannot, and then `errno` is still open(2)'s or read(2)'s, so a caller that treats a
/// missing file as empty can test it for ENOENT. A file of more than `maxSize` octets is "PATH: larger than
/// N octets" (errno EFBIG), read no further: a secret's file that is a device or a log by mistake costs
/// nothing (kSecretMax).
bool readFile(const std::string& path, std::string& out, std::string& error, size_t maxSize = SIZE_MAX);

/// readFile's reading half, for a caller that opened `fd` itself to check it first (fstat of the same
/// descriptor: the control token's mode): reads `fd` to its end into `out`, with readFile's bound, errors
/// ("PATH: cannot read: WHY", "PATH: larger than N octets") and errno. Does not close `fd`.
bool readOpenFile(int fd, const std::string& path, std::string& out, std::string& error,
                  size_t maxSize = SIZE_MAX);

/// The most a secret's file holds (a TSIG key, cookie secrets, the control token): 64 KiB.
inline constexpr size_t kSecretMax = 64 << 10;

}  // namespace gslb::zones
