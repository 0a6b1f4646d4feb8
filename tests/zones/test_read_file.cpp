// readFile (zones/read_file.hpp), the one whole-file read behind zone digests, DNSSEC keys, state_dir files
// and gslbctl's edits: every error names the file and says why, and a missing file stays recognisable.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "helpers.hpp"
#include "zones/dnssec_keys.hpp"
#include "zones/read_file.hpp"

using namespace gslb::zones;

TEST_CASE("readFile: the bytes as they are, or an error that names the file") {
    std::string text("line 1\r\nline 2\0tail", 19), out, error;
    std::string path = testutil::writeFile("read-file.bin", text);
    REQUIRE_MESSAGE(readFile(path, out, error), error);
    CHECK(out == text);  // binary: the CR and the NUL kept

    std::string big(200000, 'x');  // more than one read
    REQUIRE(readFile(testutil::writeFile("read-file.big", big), out, error));
    CHECK(out.size() == big.size());

    std::string missing = testutil::tempDir() + "/no-such-file";
    CHECK_FALSE(readFile(missing, out, error));
    CHECK(errno == ENOENT);  // callers that treat "absent" as empty test this
    CHECK(error == missing + ": cannot open: No such file or directory");
    CHECK(out.empty());

    CHECK_FALSE(readFile(testutil::tempDir(), out, error));
    CHECK(error == testutil::tempDir() + ": cannot read: Is a directory");
}

TEST_CASE("readFile: a file over maxSize is refused, read no further; exactly maxSize is read") {
    std::string out, error;
    std::string path = testutil::writeFile("read-file.capped", std::string(100, 's'));
    REQUIRE_MESSAGE(readFile(path, out, error, 100), error);
    CHECK(out.size() == 100);
    CHECK_FALSE(readFile(path, out, error, 99));
    CHECK(errno == EFBIG);
    CHECK(error == path + ": larger than 99 octets");
    CHECK(out.empty());
    // A device that never ends (a secret_file = "/dev/zero" by mistake) stops at the cap.
    CHECK_FALSE(readFile("/dev/zero", out, error, kSecretMax));
    CHECK(error == "/dev/zero: larger than 65536 octets");
}

TEST_CASE("loadKeys names the key file it cannot read, and why") {
    DnssecKey k;
    std::string error;
    REQUIRE_MESSAGE(generateKey("read.test.", kAlgEd25519, 257, 1700000000, k, error), error);
    std::string dir = testutil::tempDir() + "/keys-read";
    REQUIRE(mkdir(dir.c_str(), 0700) == 0);
    REQUIRE_MESSAGE(writeKeyFiles(k, dir, error), error);
    REQUIRE(unlink((k.file + ".private").c_str()) == 0);
    std::vector<DnssecKey> keys;
    CHECK_FALSE(loadKeys(dir, "read.test.", keys, error));
    CHECK(error == k.file +
                       ".private: cannot open: No such file or directory (every key in the directory "
                       "needs its private half)");
}
