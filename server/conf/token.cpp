#include "server/conf/token.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "zones/read_file.hpp"

namespace gslb::server {

std::string tokenModeProblem(const std::string& path, unsigned mode) {
    std::vector<const char*> lets;
    if (mode & S_IROTH) lets.push_back("any user of this host read it");
    if (mode & S_IWOTH) lets.push_back("any user write it");
    if (mode & S_IWGRP) lets.push_back("its group write it");
    if (lets.empty()) return {};
    return fmt::format(
        "{}: the control token file is mode {:04o}, which lets {}: whoever holds the token can "
        "drain every site and reload; run chmod 600 {} (or 640 with gslbd's group)",
        path, mode & 07777, fmt::join(lets, " and "), path);
}

bool loadControlToken(const std::string& path, std::string& token, std::string& error) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        const int err = errno;
        if (fd >= 0) ::close(fd);
        error = fmt::format("{}: cannot read the control token file: {}", path, strerror(err));
        if (err == EACCES)
            error += fmt::format(
                " (gslbd reads it as uid {}: make that user its owner, e.g. chown, then chmod 600)",
                geteuid());
        else if (err == ENOENT)
            error += " (a relative token_file is read from the config file's directory)";
        return false;
    }
    if (std::string why = tokenModeProblem(path, unsigned(st.st_mode)); !why.empty()) {
        ::close(fd);
        error = why;
        return false;
    }
    std::string t, why;
    const bool read = zones::readOpenFile(fd, path, t, why, zones::kSecretMax);
    const int err = errno;
    ::close(fd);
    if (!read) {
        error = fmt::format(
            "{}: cannot read the control token file: {}", path,
            err == EFBIG ? fmt::format("larger than {} octets", zones::kSecretMax) : strerror(err));
        return false;
    }
    while (!t.empty() && isspace(uint8_t(t.back()))) t.pop_back();
    while (!t.empty() && isspace(uint8_t(t.front()))) t.erase(t.begin());
    if (t.size() < 8) {
        error = fmt::format("{}: the control token must be at least 8 characters", path);
        return false;
    }
    token = t;
    return true;
}

}  // namespace gslb::server
