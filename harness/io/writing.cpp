#include "io/io.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <istream>
#include <stdexcept>
#include <sstream>
#include <string_view>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <png.h>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"

namespace nbody {

std::filesystem::path output_target(const std::string& path) {
    namespace fs = std::filesystem;
    fs::path target(path);
    std::error_code ec;
    // A chain of links ends at the file they name; a loop is the writer's error to report.
    for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {
        const fs::path next = fs::read_symlink(target, ec);
        if (ec) break;
        target = next.is_absolute() ? next : target.parent_path() / next;
    }
    return target;
}

namespace {

// The temporary file beside `target` that write_file_atomically renames over it.
std::filesystem::path temporary_beside(const std::filesystem::path& target) {
    std::string temp_name = ".";  // appended piece by piece: GCC 12 warns (-Wrestrict) wrongly on "." + string
    temp_name += target.filename().string();
    temp_name += ".tmp";
    temp_name += std::to_string(::getpid());
    return target.parent_path() / temp_name;
}

// Why no new file can be created in `folder`, after open() failed there with `error`: creating a file
// in a folder that exists fails with ENOENT on file systems that take no new files (/proc, /sys).
std::string cannot_create_in(const std::filesystem::path& folder, int error) {
    const std::string shown = folder.empty() ? std::string(".") : display_path(folder.string());
    std::error_code ec;
    if (error == ENOENT && std::filesystem::is_directory(folder.empty() ? "." : folder, ec))
        return "its folder " + shown + " takes no new files (not writable)";
    return "cannot create a file in its folder " + shown + ": " + std::strerror(error);
}

// The refusal of an output that no writer replaces or writes into; none for the other nodes.
void refuse_node(const std::string& path, OutputNode node) {
    if (node == OutputNode::folder) throw UsageError(display_path(path) + ": cannot write: is a folder");
    if (node == OutputNode::other)
        throw UsageError(display_path(path) +
                         ": cannot write: not a file, character device or FIFO (a block device or a socket is never written)");
}

void write_all(int fd, const std::string& contents, const std::function<void(const char*)>& give_up) {
    std::size_t written = 0;
    while (written < contents.size()) {
        const ssize_t k = ::write(fd, contents.data() + written, contents.size() - written);
        if (k < 0) {
            if (errno == EINTR) continue;
            give_up("write failed");
        }
        written += static_cast<std::size_t>(k);
    }
}

// A character device or a FIFO takes the contents as they are: replacing the node would replace
// /dev/null for the whole machine, or leave a FIFO's reader waiting for nothing. No O_CREAT: if the
// node went away, nothing is created in its place.
void write_into_node(const std::string& path, const std::string& contents) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) throw UsageError(display_path(path) + ": cannot write: " + std::strerror(errno));
    write_all(fd, contents, [&](const char* what) {
        const int error = errno;
        ::close(fd);
        throw UsageError(display_path(path) + ": " + what + ": " + std::strerror(error));
    });
    if (::close(fd) != 0) throw UsageError(display_path(path) + ": write failed: " + std::strerror(errno));
}

}  // namespace

OutputNode output_node(const std::string& path) {
    struct stat st {};
    if (path.empty() || ::stat(path.c_str(), &st) != 0) return OutputNode::absent;
    if (S_ISREG(st.st_mode)) return OutputNode::regular_file;
    if (S_ISDIR(st.st_mode)) return OutputNode::folder;
    if (S_ISCHR(st.st_mode)) return OutputNode::character_device;
    if (S_ISFIFO(st.st_mode)) return OutputNode::fifo;
    return OutputNode::other;
}

void check_writable(const std::string& path, bool folders_made) {
    namespace fs = std::filesystem;
    if (path.empty()) throw UsageError("an empty path cannot be written");
    const std::string shown = display_path(path);
    const OutputNode node = output_node(path);
    refuse_node(path, node);
    if (node == OutputNode::character_device || node == OutputNode::fifo) {
        if (::access(path.c_str(), W_OK) != 0) throw UsageError(shown + ": cannot write: not writable: " + std::strerror(errno));
        return;
    }
    const fs::path target = output_target(path);
    const fs::path folder = target.parent_path();
    std::error_code ec;
    if (!folder.empty() && !fs::exists(folder, ec)) {
        if (!folders_made) throw UsageError(shown + ": cannot write: its folder " + display_path(folder.string()) + " does not exist");
        // The writer makes the missing folders: the nearest existing one must be a folder it may write in.
        fs::path existing = folder;
        while (!existing.empty() && !fs::exists(existing, ec)) existing = existing.parent_path();
        if (existing.empty()) existing = ".";
        if (!fs::is_directory(existing, ec))
            throw UsageError(shown + ": cannot write: " + display_path(existing.string()) + " is not a folder");
        if (::access(existing.c_str(), W_OK | X_OK) != 0)
            throw UsageError(shown + ": cannot write: cannot create a folder in " + display_path(existing.string()) + ": " +
                             std::strerror(errno));
        return;
    }
    if (!folder.empty() && !fs::is_directory(folder, ec))
        throw UsageError(shown + ": cannot write: " + display_path(folder.string()) + " is not a folder");
    if (fs::exists(target, ec) && ::access(target.c_str(), W_OK) != 0)
        throw UsageError(shown + ": cannot write: not writable: " + std::strerror(errno));
    // The writer's own first step, undone: a folder that refuses a new file is found before any work.
    const fs::path temp = temporary_beside(target);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST) return;  // a temporary file a killed writer left: the writer truncates it
        throw UsageError(shown + ": cannot write: " + cannot_create_in(folder, errno));
    }
    ::close(fd);
    fs::remove(temp, ec);
}

bool same_file(const std::string& a, const std::string& b) {
    namespace fs = std::filesystem;
    std::error_code ec_a, ec_b;
    const fs::path ca = fs::weakly_canonical(fs::absolute(output_target(a)), ec_a);
    const fs::path cb = fs::weakly_canonical(fs::absolute(output_target(b)), ec_b);
    if (!ec_a && !ec_b && ca == cb) return true;
    std::error_code ec;
    return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec);  // hard links too
}

void write_file_atomically(const std::string& path, const std::string& contents) {
    if (path.empty()) throw UsageError("an empty path cannot be written");
    const OutputNode node = output_node(path);
    refuse_node(path, node);
    if (node == OutputNode::character_device || node == OutputNode::fifo) return write_into_node(path, contents);
    const std::string shown = display_path(path);
    // Through a link to the file it names: the link stays a link, the file keeps its mode and group.
    const std::filesystem::path target = output_target(path);
    const std::filesystem::path temp = temporary_beside(target);
    // POSIX I/O for fsync: the data is on the disk before the name points at it, so even a crash
    // of the machine leaves the old file or the new one, never a truncated one.
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw UsageError(shown + ": cannot write: " + cannot_create_in(target.parent_path(), errno));
    const auto give_up = [&](const char* what) {
        const int error = errno;
        ::close(fd);
        std::error_code ignored;
        std::filesystem::remove(temp, ignored);
        throw UsageError(shown + ": " + what + ": " + std::strerror(error));
    };
    struct stat existing {};
    if (::stat(target.c_str(), &existing) == 0) {
        if (::fchmod(fd, existing.st_mode & 07777) != 0) give_up("cannot keep the file's mode");
        // Owner and group as they were where this process may set them (root, or a member of the group).
        [[maybe_unused]] const int kept = ::fchown(fd, existing.st_uid, existing.st_gid);
    }
    write_all(fd, contents, give_up);
    if (::fsync(fd) != 0) give_up("write failed");
    if (::close(fd) != 0) {
        std::error_code ignored;
        std::filesystem::remove(temp, ignored);
        throw UsageError(shown + ": write failed: " + std::strerror(errno));
    }
    std::error_code ec;
    std::filesystem::rename(temp, target, ec);
    if (ec) {
        std::error_code ignored;
        std::filesystem::remove(temp, ignored);
        throw UsageError(shown + ": cannot move the finished file into place: " + ec.message());
    }
}

namespace {
template <class Real>
std::string format_float(Real v) {
    std::array<char, 40> buffer{};
    const auto [ptr, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), v);  // shortest round-trip
    return std::string(buffer.data(), ptr);
}
}  // namespace

template <class Real>
void write_bodies_csv(const std::string& path, const BodiesT<Real>& bodies, const std::string& comment) {
    std::ostringstream out;
    if (!comment.empty()) out << "# " << comment << "\n";
    out << "# " << joined_field_names(bodies.dim) << "\n";
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        for (int axis = 0; axis < bodies.dim; ++axis) out << format_float(bodies.position(axis)[i]) << ',';
        for (int axis = 0; axis < bodies.dim; ++axis) out << format_float(bodies.velocity(axis)[i]) << ',';
        out << format_float(bodies.m[i]) << '\n';
    }
    write_file_atomically(path, out.str());
}

template void write_bodies_csv<float>(const std::string&, const BodiesT<float>&, const std::string&);
template void write_bodies_csv<double>(const std::string&, const BodiesT<double>&, const std::string&);

void write_state_csv(const std::string& path, const HostState& state, const std::string& comment) {
    std::visit([&](const auto& bodies) { write_bodies_csv(path, bodies, comment); }, state);
}

void write_activity_map_csv(const std::string& path, const std::vector<float>& map, int d) {
    std::ostringstream out;
    for (int row = 0; row < d; ++row) {
        for (int col = 0; col < d; ++col) {
            if (col) out << ',';
            out << format_float(map[static_cast<std::size_t>(row) * d + col]);
        }
        out << '\n';
    }
    write_file_atomically(path, out.str());
}

namespace {

// A perceptually ordered dark-to-bright colour ramp (approximates matplotlib's "inferno").
std::array<unsigned char, 3> heat_colour(double t) {
    static constexpr double stops[][3] = {
        {0, 0, 4}, {40, 11, 84}, {101, 21, 110}, {159, 42, 99}, {212, 72, 66}, {245, 125, 21}, {250, 193, 39}, {252, 255, 164}};
    t = std::clamp(t, 0.0, 1.0) * 7.0;
    const int k = std::min(static_cast<int>(t), 6);
    const double f = t - k;
    std::array<unsigned char, 3> rgb{};
    for (int c = 0; c < 3; ++c)
        rgb[c] = static_cast<unsigned char>(std::lround(stops[k][c] + f * (stops[k + 1][c] - stops[k][c])));
    return rgb;
}

// What libpng's callbacks leave: the encoded file, or why encoding stopped.
struct PngOutput {
    std::string bytes;
    std::exception_ptr failure;  // thrown in a callback (out of memory)
    char library_message[256] = {};  // libpng's own error
};

extern "C" {

void append_png_bytes(png_structp png, png_bytep data, std::size_t size) {
    auto* out = static_cast<PngOutput*>(png_get_io_ptr(png));
    try {
        out->bytes.append(reinterpret_cast<const char*>(data), size);
    } catch (...) {
        out->failure = std::current_exception();
    }
    // No exception crosses libpng's C frames: png_error() longjmps back to encode_rgb_png.
    if (out->failure) png_error(png, "the output could not be stored");
}

void flush_nothing(png_structp) {}

[[noreturn]] void record_png_error(png_structp png, png_const_charp message) {
    auto* out = static_cast<PngOutput*>(png_get_error_ptr(png));
    std::snprintf(out->library_message, sizeof out->library_message, "%s", message);
    png_longjmp(png, 1);
}

void ignore_png_warning(png_structp, png_const_charp) {}

}  // extern "C"

// Encodes `side` x `side` 8-bit RGB pixels, row by row from the top, as a compressed PNG into
// `out.bytes`. Between setjmp and longjmp this frame holds only libpng state and plain values, so
// an error jumping back skips no destructor. False with the reason in `out` when libpng gave up.
bool encode_rgb_png(const unsigned char* rgb_rows, std::uint32_t side, PngOutput& out) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &out, record_png_error, ignore_png_warning);
    png_infop info = png == nullptr ? nullptr : png_create_info_struct(png);
    if (info == nullptr) {
        png_destroy_write_struct(&png, nullptr);  // accepts a null png
        std::snprintf(out.library_message, sizeof out.library_message, "libpng could not start (out of memory)");
        return false;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return false;
    }
    png_set_write_fn(png, &out, append_png_bytes, flush_nothing);
    png_set_IHDR(png, info, side, side, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (std::uint32_t y = 0; y < side; ++y)
        png_write_row(png, rgb_rows + static_cast<std::size_t>(y) * side * 3);
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return true;
}

}  // namespace

void write_activity_map_png(const std::string& path, const std::vector<float>& map, int d, int max_pixels) {
    // Pool cells into blocks when D exceeds the image size; enlarge cells when D is small.
    const int pool = std::max(1, (d + max_pixels - 1) / max_pixels);
    const int pooled = (d + pool - 1) / pool;
    const int cell_pixels = std::max(1, 512 / pooled);
    const int side = pooled * cell_pixels;
    std::vector<double> value(static_cast<std::size_t>(pooled) * pooled, 0.0);
    for (int row = 0; row < d; ++row)
        for (int col = 0; col < d; ++col)
            value[static_cast<std::size_t>(row / pool) * pooled + col / pool] += map[static_cast<std::size_t>(row) * d + col];
    const double peak = *std::max_element(value.begin(), value.end());
    std::vector<unsigned char> rgb_rows;
    rgb_rows.reserve(static_cast<std::size_t>(side) * side * 3);
    for (int y = 0; y < side; ++y) {
        const int row = pooled - 1 - y / cell_pixels;  // row 0 (y near 0) at the bottom, as on a plot
        for (int x = 0; x < side; ++x) {
            const double v = value[static_cast<std::size_t>(row) * pooled + x / cell_pixels];
            const auto rgb = heat_colour(peak > 0 ? v / peak : 0.0);
            rgb_rows.insert(rgb_rows.end(), rgb.begin(), rgb.end());
        }
    }
    PngOutput out;
    if (!encode_rgb_png(rgb_rows.data(), static_cast<std::uint32_t>(side), out)) {
        if (out.failure) std::rethrow_exception(out.failure);
        throw UsageError(display_path(path) + ": cannot encode the map as PNG: " + out.library_message);
    }
    write_file_atomically(path, out.bytes);
}

void write_activity_map(const std::string& path, const std::vector<float>& map, int d) {
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".png" || ext == ".PNG")
        write_activity_map_png(path, map, d);
    else
        write_activity_map_csv(path, map, d);
}

}  // namespace nbody
