#include "sim/app/policy_list.h"

#include <cctype>

#include "sim/core/error.h"

namespace servesim {
namespace {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

bool is_positive_integer(const std::string& text) {
  if (text.empty() || text.size() > 9) return false;
  for (const char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return std::stoll(text) > 0;
}

}  // namespace

std::vector<PolicyCombination> parse_policy_list(std::string_view list, const std::string& origin) {
  std::vector<PolicyCombination> combinations;
  for (const std::string& spec : split(list, ',')) {
    const auto fail = [&](const std::string& why) {
      throw InputError(origin, "\"" + spec + "\": " + why +
                                   " (expected SCHEDULER:ALLOCATOR[:PARAM[:PLACEMENT]], "
                                   "e.g. vllm:paged:16, vllm_v1:paged:16:no_prefix or "
                                   "orca:contiguous:pow2:buddy)");
    };
    const auto fields = split(spec, ':');
    if (fields.size() < 2 || fields.size() > 4) fail("wrong number of fields");
    for (const auto& field : fields) {
      if (field.empty()) fail("empty field");
    }
    PolicyCombination c;
    c.label = spec;
    const auto set = [&](const std::string& key, const std::string& json_value) {
      c.overrides.push_back({origin, key + "=" + json_value});
    };
    set("scheduler.name", "\"" + fields[0] + "\"");
    set("allocator.name", "\"" + fields[1] + "\"");
    if (fields[1] == "paged") {
      if (fields.size() >= 3) {
        if (!is_positive_integer(fields[2])) fail("block size must be a positive integer");
        set("allocator.block_size", fields[2]);
      }
      if (fields.size() == 4) {
        if (fields[3] != "prefix" && fields[3] != "no_prefix") {
          fail("paged allocation's fourth field is prefix or no_prefix, got \"" + fields[3] + "\"");
        }
        set("engine.enable_prefix_caching", fields[3] == "prefix" ? "true" : "false");
      }
    } else if (fields[1] == "contiguous") {
      if (fields.size() >= 3) {
        std::string reservation = fields[2];
        if (reservation.rfind("fixed-", 0) == 0) {
          const std::string tokens = reservation.substr(6);
          if (!is_positive_integer(tokens)) fail("fixed-N needs a positive number of tokens");
          set("allocator.fixed_reservation_tokens", tokens);
          reservation = "fixed";
        }
        set("allocator.reservation", "\"" + reservation + "\"");
      }
      if (fields.size() == 4) set("allocator.placement", "\"" + fields[3] + "\"");
    } else if (fields.size() > 2) {
      fail("unknown allocator \"" + fields[1] + "\" (valid: paged, contiguous)");
    }
    combinations.push_back(std::move(c));
  }
  if (combinations.empty()) throw InputError(origin, "expected at least one combination");
  return combinations;
}

}  // namespace servesim
