#include "broker/cli_exit.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ccsandbox::broker {
namespace {

bool json_errors = false;

// `text` as a JSON string: quotes, backslashes and control characters escaped.
std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      absl::StrAppend(&out, "\\", std::string(1, c));
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, absl::StrFormat("\\u%04x", static_cast<unsigned char>(c)));
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

}  // namespace

void SetJsonErrors(bool json) { json_errors = json; }

std::string ErrorJson(absl::string_view code, absl::string_view message) {
  return absl::StrCat(R"({"error":{"code":)", JsonString(code), R"(,"message":)",
                      JsonString(message), "}}");
}

int Fail(const std::string& message, absl::string_view code) {
  if (json_errors) {
    std::cerr << ErrorJson(code, message) << std::endl;
  } else {
    std::cerr << "sandboxctl: " << message << std::endl;
  }
  return kToolError;
}

}  // namespace ccsandbox::broker
