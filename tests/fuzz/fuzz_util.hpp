// Shared by the fuzz targets: a private scratch directory (on tmpfs when there is one: targets that write
// files run thousands of times a second), file writing, and the check that turns a broken invariant into a
// crash libFuzzer records.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

namespace fuzzutil {

/// A directory of this process's own, made once, removed by nobody (it lives in /dev/shm or /tmp).
inline const std::string& scratchDir() {
    static const std::string dir = [] {
        struct stat sb {};
        std::string base = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) ? "/dev/shm" : "/tmp";
        std::string tmpl = base + "/gslbd-fuzz-XXXXXX";
        if (!mkdtemp(tmpl.data())) {
            std::perror("mkdtemp");
            std::abort();
        }
        return tmpl;
    }();
    return dir;
}

inline std::string writeFile(const std::string& name, std::string_view text) {
    std::string path = scratchDir() + "/" + name;
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(text.data(), std::streamsize(text.size()));
    return path;
}

/// True when some "$INCLUDE" in `text` is followed on its line by a slash: the loader would read a file
/// outside the scratch directory (even /dev/zero). Targets skip such inputs.
inline bool includesOutside(std::string_view text) {
    for (size_t p = 0; (p = text.find('$', p)) != std::string_view::npos; ++p) {
        static constexpr std::string_view kInclude = "$include";
        if (text.size() - p < kInclude.size()) break;
        bool match = true;
        for (size_t k = 0; k < kInclude.size() && match; ++k) match = (text[p + k] | 0x20) == kInclude[k];
        if (!match) continue;
        size_t eol = text.find('\n', p);
        if (text.substr(p, eol == std::string_view::npos ? std::string_view::npos : eol - p).find('/') !=
            std::string_view::npos)
            return true;
    }
    return false;
}

/// An invariant of the code under test failed: say which, and crash so that libFuzzer keeps the input.
[[noreturn]] inline void fail(const char* file, int line, const char* what, const std::string& detail) {
    std::fprintf(stderr, "%s:%d: invariant failed: %s\n%s\n", file, line, what, detail.c_str());
    std::abort();
}

}  // namespace fuzzutil

#define FUZZ_CHECK(cond, detail)                                          \
    do {                                                                  \
        if (!(cond)) fuzzutil::fail(__FILE__, __LINE__, #cond, (detail)); \
    } while (0)
