#pragma once
// Reading the JSON files a user hands the suite (matrices, results files): every problem an
// InputError of one short line naming the file and where (line and column, or JSON pointer),
// exit status 2; never a crash, a hang or a silently dropped value (docs/reliability.md).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace nbody {

// Deeper nesting than any file of the suite uses; refused before it is built (a 10^4-deep document
// would otherwise cost a recursive walk per level in every later step).
inline constexpr int kMaxJsonDepth = 64;
// Larger than any matrix or results file the suite writes by far; refused before reading.
inline constexpr std::size_t kMaxJsonFileBytes = std::size_t{1} << 28;

// Parses `text`; `name` stands for the file in messages. Refused: malformed JSON ("NAME: not valid
// JSON at line L, column C: ..."), numbers beyond the double range, nesting deeper than
// kMaxJsonDepth, a key twice in one object (JSON would keep only the last silently).
nlohmann::json parse_json_text(std::string_view text, const std::string& name);

// Reads and parses the file at `path` (InputError when it cannot be read, is a folder or is larger
// than kMaxJsonFileBytes).
nlohmann::json read_json_file(const std::string& path);

// A JSON key or string value for a message: quoted, control bytes escaped, long ones shortened.
std::string json_text_excerpt(std::string_view text);

}  // namespace nbody
