#include "broker/cli_json.h"

#include "google/protobuf/util/json_util.h"

namespace ccsandbox::broker {

std::string JsonLine(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = false;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

}  // namespace ccsandbox::broker
