#include "tools/gslbctl/fileio.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace gslb::ctl {

std::string dirName(const std::string& path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

namespace {

std::string baseName(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

void syncDir(const std::string& dir) {
    int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

}  // namespace

TempFile::~TempFile() {
    if (!path_.empty() && !done_) unlink(path_.c_str());
}

bool TempFile::write(const std::string& target, const std::string& text, std::string& error) {
    // Follow a symlinked target: replace the file it points to, not the link.
    char resolved[PATH_MAX];
    target_ = realpath(target.c_str(), resolved) ? std::string(resolved) : target;
    std::string tmpl = dirName(target_) + "/." + baseName(target_) + ".gslbctl-XXXXXX";
    int fd = mkstemp(tmpl.data());
    if (fd < 0) {
        error = fmt::format("{}: cannot create a temp file in {}: {}", target, dirName(target_),
                            std::strerror(errno));
        return false;
    }
    path_ = tmpl;
    struct stat st;
    mode_t mode = 0644;
    if (stat(target_.c_str(), &st) == 0) {
        mode = st.st_mode & 07777;
        if (fchown(fd, st.st_uid, st.st_gid) != 0) { /* not ours to change: keep our own */
        }
    } else {
        mode_t um = umask(0);
        umask(um);
        mode = 0666 & ~um;
    }
    fchmod(fd, mode);
    size_t off = 0;
    while (off < text.size()) {
        ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            error = fmt::format("{}: write failed: {}", path_, std::strerror(errno));
            close(fd);
            return false;
        }
        off += size_t(n);
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        error = fmt::format("{}: fsync failed: {}", path_, std::strerror(errno));
        return false;
    }
    return true;
}

bool TempFile::commit(std::string& error) {
    if (rename(path_.c_str(), target_.c_str()) != 0) {
        error = fmt::format("{}: cannot replace: {}", target_, std::strerror(errno));
        return false;
    }
    done_ = true;
    syncDir(dirName(target_));
    return true;
}

bool TempFile::commitNew(std::string& error) {
    if (link(path_.c_str(), target_.c_str()) != 0) {
        error = errno == EEXIST ? fmt::format("{}: already exists; not overwriting it", target_)
                                : fmt::format("{}: cannot create: {}", target_, std::strerror(errno));
        return false;
    }
    unlink(path_.c_str());
    done_ = true;
    syncDir(dirName(target_));
    return true;
}

}  // namespace gslb::ctl
