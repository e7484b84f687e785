#pragma once
// Reading bodies from CSV and writing state and activity maps (SPEC §1).
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/bodies.hpp"

namespace nbody {

// Reads `x,y,vx,vy,m` lines (2D) or `x,y,z,vx,vy,vz,m` lines (3D), parsed in the precision of
// Real (a value outside its range is an error). Empty fields take their defaults (generator
// position for that index with `seed`, zero velocity, mass 1/N). When `expected_n` is given the
// file must hold exactly that many bodies. Throws InputError naming file, line and field; a line
// whose field count does not fit `dim` names the count found and the count `dim` needs.
// What else is refused, and why, is listed in docs/reliability.md: NaN, infinities, values out of
// range, masses <= 0, a UTF-16 file, a carriage return inside a line, a line longer than
// kMaxInputLineBytes, more than kMaxInputBodies bodies. A UTF-8 byte-order mark and CRLF line ends
// are accepted.
template <class Real>
BodiesT<Real> read_bodies_csv_of(const std::string& path, std::optional<std::size_t> expected_n, std::uint64_t seed,
                                 int dim);
// The same from a stream; `name` stands for the file in messages.
template <class Real>
BodiesT<Real> read_bodies_csv_of(std::istream& in, const std::string& name, std::optional<std::size_t> expected_n,
                                 std::uint64_t seed, int dim);

inline constexpr std::size_t kMaxInputBodies = std::size_t{1} << 26;  // the largest N the commands accept
inline constexpr std::size_t kMaxInputLineBytes = std::size_t{1} << 16;

// A state file's field names in file order, by dimension, and joined by commas ("x,y,vx,vy,m").
const std::vector<std::string>& field_names(int dim);
std::string joined_field_names(int dim);

// The dimension a state file is written in: 2 when its first body line has 5 fields, 3 when 7;
// InputError otherwise (naming the line and the count) or when it holds no body line.
int csv_state_dim(const std::string& path);

// `text` in single quotes for an error message: bytes that are not printable ASCII as \xNN, at most
// `max_chars` characters (then "..." and the length), so a message stays one short line whatever
// the input.
std::string quoted_excerpt(std::string_view text, std::size_t max_chars = 40);

// A path as every message prints it, on one line: unchanged when it holds no control character;
// otherwise in single quotes with control characters, quotes and backslashes as \xNN (a newline or
// an escape sequence in a file name must not break a message or drive the terminal).
std::string display_path(std::string_view path);
// `text` with its control characters as \xNN: a message that names something it did not pass through
// display_path still prints on one line.
std::string one_line(std::string_view text);

// A decimal integer in [min, max] as a person writes it on a command line or in an environment
// variable: digits only (no sign, blanks, exponent or fraction); std::nullopt otherwise, never a
// wrapped or saturated value.
std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t min, std::uint64_t max);

// The canonical 2D float32 form.
inline Bodies read_bodies_csv(const std::string& path, std::optional<std::size_t> expected_n, std::uint64_t seed) {
    return read_bodies_csv_of<float>(path, expected_n, seed, 2);
}

// The state of a workload (its dimension and precision) from a CSV file.
HostState read_state_csv(const std::string& path, const Workload& workload, std::optional<std::size_t> expected_n,
                         std::uint64_t seed);

// All writers go through a temporary file renamed into place: no half-written output. A path that
// names a character device or a FIFO (/dev/null, a terminal, a pipe) is written into directly.
// State files are in the input format of their dimension, values as shortest round-trip text.
template <class Real>
void write_bodies_csv(const std::string& path, const BodiesT<Real>& bodies, const std::string& comment);
void write_state_csv(const std::string& path, const HostState& state, const std::string& comment);
void write_activity_map_csv(const std::string& path, const std::vector<float>& map, int d);
// A heat map a person can look at (cells pooled to at most `max_pixels` per side).
void write_activity_map_png(const std::string& path, const std::vector<float>& map, int d,
                            int max_pixels = 1024);
// Chooses PNG for a .png path, CSV otherwise.
void write_activity_map(const std::string& path, const std::vector<float>& map, int d);

// Writes `contents` to `path` atomically: a temporary file in the same folder, flushed to the disk
// (fsync), then renamed over `path`. A symbolic link is written through: the file it names is
// replaced (the link stays), and an existing file keeps its mode and, where allowed, owner and group.
// A character device or a FIFO (also through links such as /dev/stdout) is never replaced: the
// contents are written into it (a FIFO's open waits for its reader). A block device or a socket is
// refused. UsageError when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& contents);

// What an output path names now, through its links.
enum class OutputNode { absent, regular_file, folder, character_device, fifo, other };
OutputNode output_node(const std::string& path);

// The file a write to `path` replaces: `path`, or the file its chain of symbolic links names.
std::filesystem::path output_target(const std::string& path);
// UsageError (one line, the reason) unless write_file_atomically could write `path`: checked before
// any work, so that a run never ends in a file it cannot write. `folders_made`: the writer creates
// the missing folders of `path` first, so those may be absent when the nearest existing one is a
// folder it may write in.
void check_writable(const std::string& path, bool folders_made = false);
// Whether two paths name one file (through links, "..", hard links), existing or not.
bool same_file(const std::string& a, const std::string& b);

}  // namespace nbody
