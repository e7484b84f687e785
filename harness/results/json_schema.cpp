#include "results/json_schema.hpp"

#include <cmath>
#include <regex>
#include <set>

namespace nbody {

namespace {

using nlohmann::json;

class Validator {
public:
    Validator(const json& root, std::size_t max_errors) : root_(root), max_errors_(max_errors) {}

    // True when `value` satisfies `schema`; records violations only when `record`.
    bool check(const json& schema, const json& value, const std::string& where, bool record) {
        if (schema.is_boolean()) return schema.get<bool>() || fail(record, where, "no value is allowed here");
        if (!schema.is_object()) return fail(record, where, "schema is not an object");
        bool ok = true;
        for (const auto& [keyword, argument] : schema.items()) {
            if (errors_.size() >= max_errors_) return false;
            if (ignored().count(keyword)) continue;
            if (keyword == "$ref") {
                ok &= check(resolve(argument.get<std::string>()), value, where, record);
            } else if (keyword == "type") {
                ok &= check_type(argument, value, where, record);
            } else if (keyword == "enum") {
                bool found = false;
                for (const auto& option : argument) found |= option == value;
                ok &= found || fail(record, where, "value " + excerpt(value) + " is not one of " + argument.dump());
            } else if (keyword == "const") {
                ok &= argument == value || fail(record, where, "value " + excerpt(value) + " is not " + argument.dump());
            } else if (keyword == "minimum") {
                if (value.is_number() && value.get<double>() < argument.get<double>())
                    ok &= fail(record, where, excerpt(value) + " is below the minimum " + argument.dump());
            } else if (keyword == "exclusiveMinimum") {
                if (value.is_number() && value.get<double>() <= argument.get<double>())
                    ok &= fail(record, where, excerpt(value) + " is not above " + argument.dump());
            } else if (keyword == "minLength") {
                if (value.is_string() && value.get<std::string>().size() < argument.get<std::size_t>())
                    ok &= fail(record, where, "string shorter than " + argument.dump());
            } else if (keyword == "pattern") {
                // libstdc++'s regex recurses once per character: a long string would exhaust the stack.
                if (value.is_string() && value.get_ref<const std::string&>().size() > kMaxPatternSubject)
                    ok &= fail(record, where, "string longer than " + std::to_string(kMaxPatternSubject) + " characters, pattern " + argument.dump());
                else if (value.is_string() && !std::regex_search(value.get<std::string>(), std::regex(argument.get<std::string>())))
                    ok &= fail(record, where, excerpt(value) + " does not match " + argument.dump());
            } else if (keyword == "required") {
                if (value.is_object())
                    for (const auto& name : argument)
                        if (!value.contains(name.get<std::string>()))
                            ok &= fail(record, where, "missing required field \"" + name.get<std::string>() + "\"");
            } else if (keyword == "properties") {
                if (value.is_object())
                    for (const auto& [name, sub] : argument.items())
                        if (value.contains(name)) ok &= check(sub, value[name], where + "/" + pointer_token(name), record);
            } else if (keyword == "additionalProperties") {
                if (value.is_object()) {
                    const json* listed = schema.contains("properties") ? &schema["properties"] : nullptr;
                    for (const auto& [name, sub] : value.items())
                        if (listed == nullptr || !listed->contains(name))
                            ok &= check(argument, sub, where + "/" + pointer_token(name), record);
                }
            } else if (keyword == "items") {
                if (value.is_array())
                    for (std::size_t i = 0; i < value.size(); ++i)
                        ok &= check(argument, value[i], where + "/" + std::to_string(i), record);
            } else if (keyword == "allOf") {
                for (const auto& sub : argument) ok &= check(sub, value, where, record);
            } else if (keyword == "anyOf") {
                bool any = false;
                for (const auto& sub : argument) any = any || check(sub, value, where, false);
                ok &= any || fail(record, where, "value " + excerpt(value) + " matches none of the " + std::to_string(argument.size()) +
                                                     " alternatives the schema allows here");
            } else if (keyword == "if") {
                const bool condition = check(argument, value, where, false);
                const char* branch = condition ? "then" : "else";
                if (schema.contains(branch)) ok &= check(schema[branch], value, where, record);
            } else if (keyword == "then" || keyword == "else") {
                // applied by "if"
            } else {
                ok &= fail(true, where, "schema keyword \"" + keyword + "\" is not supported by this validator");
            }
        }
        return ok;
    }

    std::vector<std::string> errors_;

private:
    static constexpr std::size_t kMaxPatternSubject = 1024;

    // A key as a JSON pointer token in a message: '~' and '/' escaped as RFC 6901 says, control
    // bytes as \xNN, at most 60 bytes, so every message stays one line.
    static std::string pointer_token(const std::string& key) {
        std::string out;
        for (const char c : key.substr(0, 60)) {
            const auto byte = static_cast<unsigned char>(c);
            if (c == '~')
                out += "~0";
            else if (c == '/')
                out += "~1";
            else if (byte < 0x20 || byte == 0x7f)
                out += "\\x" + std::string(1, "0123456789abcdef"[byte >> 4]) + "0123456789abcdef"[byte & 15];
            else
                out.push_back(c);
        }
        return key.size() > 60 ? out + "..." : out;
    }

    // A value in a message: its JSON text, shortened (a value may be a list of a million numbers).
    static std::string excerpt(const json& value) {
        const std::string text = value.dump(-1, ' ', true, json::error_handler_t::replace);
        return text.size() <= 60 ? text : text.substr(0, 60) + "...";
    }

    static const std::set<std::string>& ignored() {
        static const std::set<std::string> keywords = {"$schema", "$id", "$defs", "$comment", "title", "description"};
        return keywords;
    }

    bool fail(bool record, const std::string& where, const std::string& what) {
        if (record && errors_.size() < max_errors_) errors_.push_back((where.empty() ? "/" : where) + ": " + what);
        return false;
    }

    const json& resolve(const std::string& reference) {
        if (reference.rfind("#/", 0) != 0) throw std::invalid_argument("only local $ref is supported: " + reference);
        return root_.at(json::json_pointer(reference.substr(1)));
    }

    bool check_type(const json& type, const json& value, const std::string& where, bool record) {
        const auto matches = [&](const std::string& t) {
            if (t == "object") return value.is_object();
            if (t == "array") return value.is_array();
            if (t == "string") return value.is_string();
            if (t == "boolean") return value.is_boolean();
            if (t == "null") return value.is_null();
            if (t == "number") return value.is_number();
            if (t == "integer") {
                if (value.is_number_integer()) return true;
                if (!value.is_number_float()) return false;
                const double v = value.get<double>();  // 3.0 is an integer; 1e300 is not one any reader holds
                return std::isfinite(v) && std::trunc(v) == v && std::abs(v) <= 9007199254740992.0;
            }
            throw std::invalid_argument("unknown JSON Schema type " + t);
        };
        bool ok = false;
        if (type.is_array()) {
            for (const auto& t : type) ok = ok || matches(t.get<std::string>());
        } else {
            ok = matches(type.get<std::string>());
        }
        return ok || fail(record, where, "value " + excerpt(value) + " is not of type " + type.dump());
    }

    const json& root_;
    std::size_t max_errors_;
};

}  // namespace

std::vector<std::string> validate_json_schema(const nlohmann::json& schema, const nlohmann::json& document,
                                              std::size_t max_errors) {
    Validator validator(schema, max_errors);
    validator.check(schema, document, "", true);
    return validator.errors_;
}

}  // namespace nbody
