#include "zones/read_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gslb::zones {

bool readFile(const std::string& path, std::string& out, std::string& error, size_t maxSize) {
    out.clear();
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        error = fmt::format("{}: cannot open: {}", path, std::strerror(e));
        errno = e;
        return false;
    }
    const bool ok = readOpenFile(fd, path, out, error, maxSize);
    const int e = errno;
    close(fd);
    errno = e;
    return ok;
}

bool readOpenFile(int fd, const std::string& path, std::string& out, std::string& error, size_t maxSize) {
    out.clear();
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && size_t(st.st_size) <= maxSize)
        out.reserve(size_t(st.st_size));
    char buf[16 << 10];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            if (size_t(n) > maxSize - out.size()) {
                out.clear();
                error = fmt::format("{}: larger than {} octets", path, maxSize);
                errno = EFBIG;
                return false;
            }
            out.append(buf, size_t(n));
            continue;
        }
        if (n == 0) return true;
        if (errno == EINTR) continue;
        int e = errno;
        out.clear();
        error = fmt::format("{}: cannot read: {}", path, std::strerror(e));
        errno = e;
        return false;
    }
}

}  // namespace gslb::zones
