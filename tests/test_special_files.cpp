// Outputs that are not regular files: a FIFO and a character device given as --state-out, --map-out
// or matrix --out are written into, never replaced by a regular file (replacing /dev/null would
// capture every later write of the machine into a file; a FIFO's reader would get nothing).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "io/io.hpp"
#include "nbody/errors.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

using testing::TempDir;

using testing::Outcome;

Outcome run_bench(const std::string& args, const TempDir& dir) {
    return testing::run_capturing(std::string(NBODY_BENCH_PATH) + " " + args, dir);
}

mode_t node_type(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return 0;
    return st.st_mode & S_IFMT;
}

// Everything the FIFO's writers have put in it so far (the reader end stays open, so a writer's open
// does not wait and its data stays in the pipe until read here).
std::string drain(int fd) {
    std::string data;
    char buffer[4096];
    for (;;) {
        const ssize_t k = ::read(fd, buffer, sizeof buffer);
        if (k > 0) {
            data.append(buffer, static_cast<std::size_t>(k));
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else {
            return data;  // 0: no writer now; EAGAIN: nothing more yet
        }
    }
}

// A FIFO in a temporary folder with its reader end open (non-blocking).
struct Fifo {
    TempDir dir;
    std::string path = dir.file("fifo");
    int reader = -1;
    Fifo() {
        if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error(std::string("mkfifo: ") + std::strerror(errno));
        reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (reader < 0) throw std::runtime_error(std::string("open fifo: ") + std::strerror(errno));
    }
    ~Fifo() { ::close(reader); }
};

// A character device made with mknod in a temporary folder: the null device's numbers (1, 3), so
// that what a writer puts into it goes nowhere, as with /dev/null. Unset (with the reason) where
// mknod is not allowed (not root) or the folder's file system ignores device nodes (nodev).
struct NullDevice {
    TempDir dir;
    std::string path = dir.file("null");
    std::string unusable;
    NullDevice() {
        if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
            unusable = std::string("mknod of a character device: ") + std::strerror(errno) + " (needs root)";
            return;
        }
        const int probe = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (probe < 0) unusable = std::string("the device node cannot be opened (a nodev file system?): ") + std::strerror(errno);
        ::close(probe);
    }
};

// A character device whose reader sees what is written: a pseudo-terminal (raw mode), its master
// read while the writers write (a terminal holds only a few kB unread).
struct Terminal {
    int master = -1;
    std::string path;
    std::string unusable;
    Terminal() {
        master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        const char* name = master >= 0 && ::grantpt(master) == 0 && ::unlockpt(master) == 0 ? ::ptsname(master) : nullptr;
        if (name == nullptr) {
            unusable = std::string("no pseudo-terminal: ") + std::strerror(errno);
            return;
        }
        path = name;
        // Kept open: the terminal stays up between writers, and raw mode keeps "\n" as written.
        slave_ = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        termios raw {};
        if (slave_ < 0 || ::tcgetattr(slave_, &raw) != 0) {
            unusable = std::string("cannot open the pseudo-terminal: ") + std::strerror(errno);
            return;
        }
        ::cfmakeraw(&raw);
        ::tcsetattr(slave_, TCSANOW, &raw);
        reading_ = std::thread([this] {
            char buffer[4096];
            for (;;) {
                pollfd ready{.fd = master, .events = POLLIN, .revents = 0};
                if (::poll(&ready, 1, 100) > 0) {
                    const ssize_t k = ::read(master, buffer, sizeof buffer);
                    if (k <= 0) return;
                    const std::lock_guard<std::mutex> lock(mutex_);
                    data_.append(buffer, static_cast<std::size_t>(k));
                } else if (stop_) {
                    return;
                }
            }
        });
    }
    ~Terminal() {
        stop_ = true;
        if (reading_.joinable()) reading_.join();
        if (slave_ >= 0) ::close(slave_);
        if (master >= 0) ::close(master);
    }
    // Everything written into the terminal (once 100 ms pass with nothing more).
    std::string received() {
        stop_ = true;
        if (reading_.joinable()) reading_.join();
        return data_;
    }

private:
    int slave_ = -1;
    std::thread reading_;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::string data_;
};

std::size_t entries_in(const std::filesystem::path& folder) {
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++count;
    return count;
}

TEST(SpecialFiles, TheWriterWritesIntoAFifoAndLeavesIt) {
    Fifo fifo;
    write_file_atomically(fifo.path, "first\n");
    write_file_atomically(fifo.path, "second\n");
    EXPECT_EQ(node_type(fifo.path), S_IFIFO);
    EXPECT_EQ(drain(fifo.reader), "first\nsecond\n");
    EXPECT_EQ(entries_in(fifo.dir.path()), 1u);  // no temporary file beside it
    EXPECT_NO_THROW(check_writable(fifo.path));
    EXPECT_EQ(output_node(fifo.path), OutputNode::fifo);
}

TEST(SpecialFiles, RunWritesItsStateIntoAFifoAndItsReaderGetsIt) {
    Fifo fifo;
    const Outcome r = run_bench("run --variant serial.reference -n 16 --steps 1 --state-out " + fifo.path, fifo.dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(node_type(fifo.path), S_IFIFO);
    const std::string state = drain(fifo.reader);
    EXPECT_EQ(state.rfind("# nbody 2d/fp32/euler state after 1 steps of serial.reference", 0), 0u) << state;
    EXPECT_EQ(std::count(state.begin(), state.end(), '\n'), 2 + 16) << state;
}

// The results file is rewritten after every configuration: a FIFO's reader would get several
// documents, so a matrix refuses one, before any work, and leaves it a FIFO.
TEST(SpecialFiles, MatrixRefusesAFifoAsItsResultsFile) {
    Fifo fifo;
    const std::string matrix = fifo.dir.write("m.json", R"({"name": "f", "steps": 1, "repetitions": 1, "groups": [
        {"variants": ["serial.reference"], "n": [16], "d": [2]}]})");
    const Outcome r = run_bench("matrix " + matrix + " --out " + fifo.path + " --overwrite", fifo.dir);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(fifo.path + " is a FIFO: matrix rewrites its results file after every configuration"), std::string::npos)
        << r.err;
    EXPECT_EQ(node_type(fifo.path), S_IFIFO);
    EXPECT_EQ(drain(fifo.reader), "");
}

TEST(SpecialFiles, TheWriterWritesIntoACharacterDeviceAndLeavesIt) {
    Terminal terminal;
    ASSERT_EQ(terminal.unusable, "");
    write_file_atomically(terminal.path, "into the terminal\n");
    EXPECT_EQ(node_type(terminal.path), S_IFCHR);
    EXPECT_EQ(terminal.received(), "into the terminal\n");
    NullDevice device;
    if (!device.unusable.empty()) GTEST_SKIP() << device.unusable;
    write_file_atomically(device.path, "into the device\n");
    EXPECT_EQ(node_type(device.path), S_IFCHR);
    EXPECT_EQ(entries_in(device.dir.path()), 1u);  // no temporary file beside it, nothing in its place
    EXPECT_EQ(output_node(device.path), OutputNode::character_device);
}

// run's two outputs into one character device (as --state-out /dev/null --map-out /dev/null): both
// written, in turn; the node stays a character device.
TEST(SpecialFiles, RunWritesStateAndMapIntoOneCharacterDevice) {
    Terminal terminal;
    ASSERT_EQ(terminal.unusable, "");
    const std::string run = "run --variant serial.reference -n 16 -d 2 --steps 1 ";
    TempDir dir;
    const Outcome r = run_bench(run + "--state-out " + terminal.path + " --map-out " + terminal.path, dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string received = terminal.received();
    EXPECT_EQ(received.rfind("# nbody 2d/fp32/euler state after 1 steps", 0), 0u) << received;
    EXPECT_EQ(std::count(received.begin(), received.end(), '\n'), 2 + 16 + 2) << received;  // state, then the 2 x 2 map
    NullDevice device;
    if (!device.unusable.empty()) GTEST_SKIP() << device.unusable;
    const Outcome null = run_bench(run + "--state-out " + device.path + " --map-out " + device.path, device.dir);
    ASSERT_EQ(null.status, 0) << null.err;
    EXPECT_EQ(node_type(device.path), S_IFCHR);
}

// `matrix --out /dev/null --overwrite` replaced the machine's /dev/null with the JSON: a character
// device is written into, and what arrives is the results document.
TEST(SpecialFiles, MatrixWritesIntoACharacterDeviceAndLeavesIt) {
    TempDir dir;
    const std::string matrix = dir.write("m.json", R"({"name": "c", "steps": 1, "repetitions": 1, "groups": [
        {"variants": ["serial.reference"], "n": [16], "d": [2]}]})");
    Terminal terminal;
    ASSERT_EQ(terminal.unusable, "");
    const Outcome r = run_bench("matrix " + matrix + " --out " + terminal.path + " --overwrite --progress log", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string received = terminal.received();
    EXPECT_NE(received.find("\"nbody_results_version\""), std::string::npos) << received.substr(0, 200);
    EXPECT_NE(received.find("serial.reference/n:16/d:2/steps:1"), std::string::npos);
    NullDevice device;
    if (!device.unusable.empty()) GTEST_SKIP() << device.unusable;
    const Outcome null = run_bench("matrix " + matrix + " --out " + device.path + " --overwrite", dir);
    ASSERT_EQ(null.status, 0) << null.err;
    EXPECT_EQ(node_type(device.path), S_IFCHR);
    EXPECT_EQ(entries_in(device.dir.path()), 1u);
}

// Neither a block device nor a socket is written or replaced: refused before any work.
TEST(SpecialFiles, ASocketIsRefused) {
    TempDir dir;
    const std::string path = dir.file("socket");
    ASSERT_EQ(::mknod(path.c_str(), S_IFSOCK | 0600, 0), 0) << std::strerror(errno);
    EXPECT_THROW(check_writable(path), UsageError);
    EXPECT_THROW(write_file_atomically(path, "x"), UsageError);
    EXPECT_EQ(node_type(path), S_IFSOCK);
    const Outcome r = run_bench("run --variant serial.reference -n 16 --steps 1 --state-out " + path, dir);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(path + ": cannot write: not a file, character device or FIFO"), std::string::npos) << r.err;
    EXPECT_EQ(node_type(path), S_IFSOCK);
}

}  // namespace
}  // namespace nbody
